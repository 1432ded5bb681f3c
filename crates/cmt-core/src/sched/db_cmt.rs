//! DB-CMT's load-based path choice (DB-CMT 2022 §4, eq. 1–3; docs/algorithms.md §5.1, decision D10): each
//! new chunk goes to the available path with the least data queued in the network,
//! `D_i = cwnd_i · (1 − RTTmin_i / SRTT_i)` (TCP Vegas' diff), ties to the smaller SRTT.
//! Algorithm 1 of the paper is a missing figure; this rule is decision D10 (docs/algorithms.md), from
//! "transmit more chunks through the least loaded, minimum delay path". A path with no
//! RTT sample yet counts as empty (D = 0).

use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::view::{PathId, PathView};

/// Factory for [`DbCmt`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct DbCmtFactory;

impl DbCmtFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("db-cmt", &[])?;
        Ok(DbCmtFactory)
    }
}

impl SchedulerFactory for DbCmtFactory {
    fn name(&self) -> &'static str {
        "db-cmt"
    }
    fn build(&self, _num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(DbCmt)
    }
}

/// Queued data `D_i` of DB-CMT 2022 eq. 3, in bytes.
pub fn queued_bytes(p: &PathView) -> f64 {
    match (p.srtt, p.min_rtt) {
        (Some(s), Some(m)) if s.as_nanos() > 0 => {
            p.cwnd as f64 * (1.0 - m.as_nanos() as f64 / s.as_nanos() as f64).max(0.0)
        }
        _ => 0.0,
    }
}

/// The DB-CMT scheduler (stateless).
#[derive(Clone, Debug, Default)]
pub struct DbCmt;

impl Scheduler for DbCmt {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        ctx.paths
            .iter()
            .filter(|p| p.can_send)
            .min_by(|a, b| {
                queued_bytes(a)
                    .total_cmp(&queued_bytes(b))
                    .then_with(|| (a.srtt.is_none(), a.srtt).cmp(&(b.srtt.is_none(), b.srtt)))
            })
            .map(|p| p.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};
    use crate::time::Duration;

    #[test]
    fn least_queued_data_wins_ties_go_to_the_faster_path() {
        // (cwnd, srtt ms, min rtt ms) per path -> choice. D = cwnd·(1 − min/srtt).
        type Case = (&'static [(u64, u64, u64)], usize);
        let cases: &[Case] = &[
            (&[(20_000, 100, 50), (20_000, 60, 50)], 1), // D 10000 vs 3333
            (&[(40_000, 110, 100), (8_000, 60, 30)], 0), // D 3636 vs 4000
            (&[(10_000, 50, 50), (10_000, 20, 20)], 1),  // both 0: smaller SRTT
        ];
        for (p, want) in cases {
            let paths: Vec<_> = p
                .iter()
                .enumerate()
                .map(|(i, &(c, s, m))| PathView {
                    min_rtt: Some(Duration::from_millis(m)),
                    ..view(i, c, 0, s, true)
                })
                .collect();
            assert_eq!(DbCmt.select(&ctx(&paths)), Some(PathId(*want)), "{p:?}");
        }
        assert!(
            (queued_bytes(&PathView {
                min_rtt: Some(Duration::from_millis(50)),
                ..view(0, 20_000, 0, 100, true)
            }) - 10_000.0)
                .abs()
                < 1e-6
        );
    }
}
