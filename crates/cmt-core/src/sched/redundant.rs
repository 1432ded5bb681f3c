//! Redundant scheduling, as the Linux MPTCP `redundant` scheduler (multipath-tcp.org
//! `mptcp_redundant.c`; Frömmgen et al., "ReMP TCP", 2016): every chunk is sent on every
//! active path. New data goes only to the ACTIVE path with the smallest SRTT (paths
//! without a sample last), when it has cwnd room; each new chunk is then queued as a
//! copy for every other ACTIVE path. A path sends its copies in order, before new data,
//! whenever its cwnd allows, and skips those already acknowledged — so a slow path
//! carries only what the fast path has not delivered yet and never holds up the
//! transfer, and a chunk lost on one path is repaired by its copy without a
//! retransmission.
//!
//! Our decision where SCTP differs from MPTCP: one TSN space means a SACK cannot say
//! which copy arrived. Acknowledgements grow the cwnd of the path that sent the chunk
//! first; a copy only frees its path's flight. So new data stays on the fastest path —
//! letting a slower path originate chunks would credit it with acks its copies on the
//! fast path earned, and its window would grow past what its own path carries. No
//! parameters.

use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::view::{PathId, PathState};

/// Factory for [`Redundant`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct RedundantFactory;

impl RedundantFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("redundant", &[])?;
        Ok(RedundantFactory)
    }
}

impl SchedulerFactory for RedundantFactory {
    fn name(&self) -> &'static str {
        "redundant"
    }
    fn build(&self, _num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(Redundant::default())
    }
}

/// Chunks sent since the last copy request, with their paths.
#[derive(Clone, Debug, Default)]
pub struct Redundant {
    fresh: Vec<(u64, PathId)>,
}

impl Scheduler for Redundant {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        let fastest = ctx
            .paths
            .iter()
            .filter(|p| p.state == PathState::Active)
            .min_by_key(|p| (p.srtt.is_none(), p.srtt, p.id))?;
        fastest.can_send.then_some(fastest.id)
    }

    fn makes_copies(&self) -> bool {
        true
    }

    fn on_sent(&mut self, path: PathId, tsn: u64, _bytes: u32) {
        self.fresh.push((tsn, path));
    }

    fn copies(&mut self, ctx: &SchedContext<'_>, out: &mut Vec<(u64, PathId)>) {
        for (tsn, sent_on) in self.fresh.drain(..) {
            out.extend(
                ctx.paths
                    .iter()
                    .filter(|p| p.id != sent_on && p.state == PathState::Active)
                    .map(|p| (tsn, p.id)),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    #[test]
    fn every_new_chunk_is_copied_to_every_other_active_path() {
        let mut paths: Vec<_> = (0..3)
            .map(|i| view(i, 10_000, 0, 10 * (i as u64 + 1), true))
            .collect();
        paths[2].state = PathState::Inactive;
        let mut r = Redundant::default();
        assert_eq!(
            r.select(&ctx(&paths)),
            Some(PathId(0)),
            "fastest path first"
        );
        r.on_sent(PathId(0), 7, 1000);
        r.on_sent(PathId(1), 8, 1000);
        let mut out = Vec::new();
        r.copies(&ctx(&paths), &mut out);
        // Path 2 is inactive: no copies for it.
        assert_eq!(out, vec![(7, PathId(1)), (8, PathId(0))]);
        out.clear();
        r.copies(&ctx(&paths), &mut out);
        assert!(out.is_empty(), "each chunk is copied once");
    }
}
