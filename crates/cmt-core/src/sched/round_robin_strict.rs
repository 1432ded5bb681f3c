//! Strict round-robin: one chunk per active path in turn, and a path's turn waits for
//! room in its window. This is the round-robin of schedulers evaluated by prototype
//! (Kuhn et al., DAPS, ICC 2014; Wu et al. 2019, JAPS), which "loop over paths" chunk by
//! chunk: every path carries the same number of chunks, so a fast path is held to the
//! slow path's pace and two paths deliver about twice the slow path's goodput. CMT's
//! round-robin ([`super::RoundRobin`]) instead fills each path's window and skips a path
//! whose window is full.

use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::view::{PathId, PathState};

/// Factory for [`StrictRoundRobin`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct StrictRoundRobinFactory;

impl StrictRoundRobinFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("round-robin-strict", &[])?;
        Ok(StrictRoundRobinFactory)
    }
}

impl SchedulerFactory for StrictRoundRobinFactory {
    fn name(&self) -> &'static str {
        "round-robin-strict"
    }
    fn build(&self, num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(StrictRoundRobin { turn: 0, num_paths })
    }
}

/// Whose turn it is.
#[derive(Clone, Debug)]
pub struct StrictRoundRobin {
    /// The path the next chunk goes to, if it is active (else the next active one).
    turn: usize,
    num_paths: usize,
}

impl Scheduler for StrictRoundRobin {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        let n = ctx.paths.len();
        let next = (0..n)
            .map(|k| (self.turn + k) % n)
            .find(|&i| ctx.paths[i].state == PathState::Active)?;
        // The path whose turn it is, or nothing: the turn waits for its window.
        ctx.paths[next].can_send.then_some(PathId(next))
    }

    fn on_sent(&mut self, path: PathId, _tsn: u64, _bytes: u32) {
        self.turn = (path.0 + 1) % self.num_paths.max(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    fn paths(can: [bool; 3], active: [bool; 3]) -> Vec<crate::view::PathView> {
        (0..3)
            .map(|i| {
                let mut v = view(i, 4380, 0, 0, can[i]);
                if !active[i] {
                    v.state = PathState::PotentiallyFailed;
                }
                v
            })
            .collect()
    }

    #[test]
    fn one_chunk_per_path_in_turn_and_a_full_path_holds_its_turn() {
        let mut rr = StrictRoundRobinFactory.build(3);
        let all = paths([true; 3], [true; 3]);
        let mut order = Vec::new();
        for tsn in 0..6 {
            let p = rr.select(&ctx(&all)).unwrap();
            rr.on_sent(p, tsn, 1452);
            order.push(p.0);
        }
        assert_eq!(order, [0, 1, 2, 0, 1, 2]);
        // Path 0's turn, its window full: nothing goes, even though 1 and 2 have room.
        let p0_full = paths([false, true, true], [true; 3]);
        assert_eq!(rr.select(&ctx(&p0_full)), None);
        // A path that is not active is not waited for.
        let p0_pf = paths([false, true, true], [false, true, true]);
        assert_eq!(rr.select(&ctx(&p0_pf)), Some(PathId(1)));
    }
}
