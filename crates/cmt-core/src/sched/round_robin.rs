//! Classic CMT round-robin scheduling (Iyengar et al., ToN 2006; ns-2.35 `sctp-cmt.cc`
//! `SendMuch`; docs/algorithms.md §1.4): each transmission opportunity starts at the path after the one
//! last sent to, fills that path's cwnd, then moves on in circular order.

use super::{SchedContext, Scheduler, SchedulerFactory};
use crate::params::{ParamError, Params};
use crate::view::PathId;

/// Factory for [`RoundRobin`]. Takes no parameters.
#[derive(Clone, Debug, Default)]
pub struct RoundRobinFactory;

impl RoundRobinFactory {
    /// Validates (no parameters are accepted).
    pub fn from_params(params: &Params) -> Result<Self, ParamError> {
        params.expect_only("round-robin", &[])?;
        Ok(RoundRobinFactory)
    }
}

impl SchedulerFactory for RoundRobinFactory {
    fn name(&self) -> &'static str {
        "round-robin"
    }
    fn build(&self, _num_paths: usize) -> Box<dyn Scheduler> {
        Box::new(RoundRobin::default())
    }
}

/// Round-robin state: the path last sent to, and the one being filled now.
#[derive(Clone, Debug, Default)]
pub struct RoundRobin {
    last: Option<usize>,
    current: Option<usize>,
}

impl Scheduler for RoundRobin {
    fn begin(&mut self, _ctx: &SchedContext<'_>) {
        self.current = None;
    }

    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        let n = ctx.paths.len();
        if let Some(c) = self.current {
            if ctx.paths[c].can_send {
                return Some(PathId(c));
            }
        }
        let start = self.current.or(self.last).map_or(0, |p| p + 1);
        (0..n)
            .map(|k| (start + k) % n)
            .find(|&i| ctx.paths[i].can_send)
            .map(PathId)
    }

    fn on_sent(&mut self, path: PathId, _tsn: u64, _bytes: u32) {
        self.current = Some(path.0);
        self.last = Some(path.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{Duration, Time};
    use crate::view::PathView;

    fn view(i: usize, can_send: bool) -> PathView {
        PathView {
            rto: Duration::from_secs(3),
            can_send,
            ..PathView::idle(i)
        }
    }
    fn ctx(paths: &[PathView]) -> SchedContext<'_> {
        SchedContext {
            now: Time::ZERO,
            paths,
            peer_rwnd: 65536,
            chunk_len: 1452,
            queued_bytes: u64::MAX,
            chunks_available: usize::MAX,
            reserved: 0,
            peer_awnd: 1 << 20,
            adverts: 0,
        }
    }

    #[test]
    fn fills_the_current_path_then_moves_on_and_next_opportunity_starts_after_last() {
        let mut rr = RoundRobin::default();
        let all = [view(0, true), view(1, true), view(2, true)];
        rr.begin(&ctx(&all));
        assert_eq!(rr.select(&ctx(&all)), Some(PathId(0)));
        rr.on_sent(PathId(0), 1, 1452);
        // Path 0 still has room: stay on it.
        assert_eq!(rr.select(&ctx(&all)), Some(PathId(0)));
        // Path 0 full: next in circular order.
        let p0_full = [view(0, false), view(1, true), view(2, true)];
        assert_eq!(rr.select(&ctx(&p0_full)), Some(PathId(1)));
        rr.on_sent(PathId(1), 2, 1452);
        // New opportunity: start after the last path sent to (1), i.e. at 2.
        rr.begin(&ctx(&all));
        assert_eq!(rr.select(&ctx(&all)), Some(PathId(2)));
    }

    #[test]
    fn table_of_choices_with_blocked_paths() {
        // (last sent, which paths can send) -> choice at a fresh opportunity
        let cases: &[(Option<usize>, [bool; 3], Option<usize>)] = &[
            (None, [true, true, true], Some(0)),
            (Some(0), [true, true, true], Some(1)),
            (Some(2), [false, true, true], Some(1)),
            (Some(1), [true, false, false], Some(0)),
            (Some(1), [false, false, false], None),
        ];
        for (last, can, want) in cases {
            let mut rr = RoundRobin {
                last: *last,
                current: None,
            };
            let paths: Vec<_> = (0..3).map(|i| view(i, can[i])).collect();
            rr.begin(&ctx(&paths));
            assert_eq!(
                rr.select(&ctx(&paths)),
                want.map(PathId),
                "last {last:?} can {can:?}"
            );
        }
    }
}
