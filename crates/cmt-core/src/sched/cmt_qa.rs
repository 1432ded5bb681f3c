//! "CMT-QA*", a documented RECONSTRUCTION of CMT-QA (Xu, Liu, Guan, Zhang, Muntean,
//! IEEE TMC 12(11), 2013; docs/algorithms.md §6, decision D8): the paper's path-quality equations could not
//! be retrieved. Each new chunk goes to the available path with the earliest expected
//! arrival, inflating the handling time by the path's loss rate:
//! `T_d = SRTT_d/2 + (flight_d + L) / (BW_d · (1 − p_d))`, `BW_d = cwnd_d / SRTT_d`,
//! `p_d` the EWMA loss estimate; ties go to the larger cwnd. Paths without an RTT sample
//! use their RTO. CMT-QA's loss differentiation (no window cut on wireless losses) is a
//! congestion-control behaviour: `cc = "cmt-qa"` ([`crate::cc::CmtQaCc`]); the preset
//! `cmt-qa` combines both.

use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::view::{PathId, PathView};

/// Factory for [`CmtQa`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct CmtQaFactory;

impl CmtQaFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("cmt-qa", &[])?;
        Ok(CmtQaFactory)
    }
}

impl SchedulerFactory for CmtQaFactory {
    fn name(&self) -> &'static str {
        "cmt-qa"
    }
    fn build(&self, _num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(CmtQa)
    }
}

/// Expected arrival time of a chunk of `len` bytes on `p`, seconds from now.
pub fn expected_arrival(p: &PathView, len: u32) -> f64 {
    let srtt = p.srtt.unwrap_or(p.rto).as_secs_f64().max(1e-6);
    let bw = (p.cwnd as f64 / srtt).max(1.0);
    let good = (1.0 - p.loss_rate).max(0.01);
    srtt / 2.0 + (p.flight as f64 + len as f64) / (bw * good)
}

/// The CMT-QA* scheduler (stateless).
#[derive(Clone, Debug, Default)]
pub struct CmtQa;

impl Scheduler for CmtQa {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        ctx.paths
            .iter()
            .filter(|p| p.can_send)
            .min_by(|a, b| {
                expected_arrival(a, ctx.chunk_len)
                    .total_cmp(&expected_arrival(b, ctx.chunk_len))
                    .then_with(|| b.cwnd.cmp(&a.cwnd))
            })
            .map(|p| p.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    #[test]
    fn earliest_loss_inflated_arrival_wins() {
        // (cwnd, flight, srtt ms, loss) per path -> choice
        type Case = (&'static [(u64, u64, u64, f64)], usize);
        let cases: &[Case] = &[
            // Same delay: the emptier path.
            (&[(20_000, 15_000, 40, 0.0), (20_000, 5_000, 40, 0.0)], 1),
            // Short but full path vs long empty one: 20 + (18000+1452)/0.5 MB/s = 59 ms
            // against 100 + 1452/0.4 MB/s = 104 ms.
            (&[(10_000, 18_000, 40, 0.0), (80_000, 0, 200, 0.0)], 0),
            // Equal except loss: the clean path.
            (&[(20_000, 5_000, 40, 0.3), (20_000, 5_000, 40, 0.01)], 1),
        ];
        for (p, want) in cases {
            let paths: Vec<_> = p
                .iter()
                .enumerate()
                .map(|(i, &(c, f, s, l))| PathView {
                    loss_rate: l,
                    capacity: None,
                    advertised_rate: None,
                    ..view(i, c, f, s, true)
                })
                .collect();
            assert_eq!(CmtQa.select(&ctx(&paths)), Some(PathId(*want)), "{p:?}");
        }
    }
}
