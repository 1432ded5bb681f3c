//! minRTT, the Linux MPTCP default scheduler (multipath-tcp.org `mptcp_sched.c`
//! `get_available_subflow`; docs/algorithms.md §9.1): the new chunk goes to the available path (cwnd
//! space) with the smallest SRTT; when none is available, nothing is sent until one is.
//! Paths without an RTT sample come after those with one. The opportunistic
//! retransmission and penalisation of the kernel are not part of this scheduler.

use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::view::PathId;

/// Factory for [`MinRtt`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct MinRttFactory;

impl MinRttFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("minrtt", &[])?;
        Ok(MinRttFactory)
    }
}

impl SchedulerFactory for MinRttFactory {
    fn name(&self) -> &'static str {
        "minrtt"
    }
    fn build(&self, _num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(MinRtt)
    }
}

/// The minRTT scheduler (stateless).
#[derive(Clone, Debug, Default)]
pub struct MinRtt;

impl Scheduler for MinRtt {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        ctx.paths
            .iter()
            .filter(|p| p.can_send)
            .min_by_key(|p| (p.srtt.is_none(), p.srtt, p.id))
            .map(|p| p.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    #[test]
    fn lowest_srtt_among_paths_with_room() {
        // (srtt ms per path (0 = no sample), can_send) -> choice
        let cases: &[(&[u64], &[bool], Option<usize>)] = &[
            (&[50, 10, 30], &[true, true, true], Some(1)),
            (&[50, 10, 30], &[true, false, true], Some(2)),
            (&[50, 10, 30], &[false, false, false], None),
            (&[0, 40, 0], &[true, true, true], Some(1)),
            (&[0, 0], &[true, true], Some(0)),
        ];
        for (srtt, can, want) in cases {
            let paths: Vec<_> = srtt
                .iter()
                .zip(*can)
                .enumerate()
                .map(|(i, (&s, &c))| view(i, 10_000, 0, s, c))
                .collect();
            assert_eq!(
                MinRtt.select(&ctx(&paths)),
                want.map(PathId),
                "{srtt:?} {can:?}"
            );
        }
    }
}
