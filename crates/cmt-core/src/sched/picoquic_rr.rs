//! picoquic's multipath path selection (Huitema, `picoquic/paths.c`,
//! `picoquic_select_next_path_tuple` and `picoquic_sort_available_paths`, as of August
//! 2026; the project's `doc/multipath.md`; docs/algorithms.md §9.5): among the
//! *available* paths — validated, not standby, and with no more consecutive
//! retransmissions than the best of them — the next packet goes to the one that sent
//! least recently among those whose congestion window has room. So paths take turns
//! packet by packet, each as often as its window lets it, where CMT's round-robin
//! ([`RoundRobin`](super::RoundRobin)) fills one path's window before moving on.
//! Standby paths are promoted only when every available path is retransmitting.
//!
//! Reconstruction (decision D38): "available" is this core's ACTIVE (a path with a
//! timeout is potentially failed until it is acknowledged again, as picoquic's
//! retransmission count is non-zero until then; standby paths are this core's backup
//! paths, which the core shows ACTIVE once no regular path is); the last send counted
//! is the last new data the scheduler placed (retransmissions are placed by the
//! retransmission policy); picoquic's pacing is not modelled.

use super::{SchedContext, Scheduler};
use crate::view::{PathId, PathState};

/// picoquic's least-recently-sent choice among available paths with room.
#[derive(Clone, Debug)]
pub struct PicoquicRr {
    /// Per path, the number of the send that last went to it (0: none yet).
    last_sent: Vec<u64>,
    sends: u64,
}

impl PicoquicRr {
    /// The scheduler of an association of `num_paths` paths (more may be added).
    pub fn new(num_paths: usize) -> Self {
        PicoquicRr {
            last_sent: vec![0; num_paths],
            sends: 0,
        }
    }
}

impl Scheduler for PicoquicRr {
    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        ctx.paths
            .iter()
            .filter(|p| p.state == PathState::Active && p.can_send)
            .min_by_key(|p| (self.last_sent.get(p.id.0).copied().unwrap_or(0), p.id))
            .map(|p| p.id)
    }

    fn on_sent(&mut self, path: PathId, _tsn: u64, _bytes: u32) {
        self.sends += 1;
        // A path added after the start (an address that appears) gets its slot here.
        if self.last_sent.len() <= path.0 {
            self.last_sent.resize(path.0 + 1, 0);
        }
        self.last_sent[path.0] = self.sends;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::tests::{ctx, view};

    #[test]
    fn paths_with_room_take_turns_packet_by_packet() {
        let mut paths = [
            view(0, 60_000, 0, 20, true),
            view(1, 60_000, 0, 200, true),
            view(2, 60_000, 0, 50, true),
        ];
        let mut s = PicoquicRr::new(3);
        let mut order = Vec::new();
        for i in 0..7u64 {
            if i == 4 {
                // Path 1's window fills: the turn passes over it.
                paths[1].can_send = false;
            }
            let p = s.select(&ctx(&paths)).unwrap();
            s.on_sent(p, i, 1452);
            order.push(p.0);
        }
        assert_eq!(order, [0, 1, 2, 0, 2, 0, 2]);
    }

    #[test]
    fn a_path_added_after_the_start_takes_its_turns_too() {
        let mut s = PicoquicRr::new(1);
        let one = [view(0, 60_000, 0, 20, true)];
        let first = s.select(&ctx(&one)).unwrap();
        s.on_sent(first, 0, 1452);
        let two = [view(0, 60_000, 0, 20, true), view(1, 60_000, 0, 20, true)];
        let order: Vec<usize> = (1..5)
            .map(|i| {
                let p = s.select(&ctx(&two)).unwrap();
                s.on_sent(p, i, 1452);
                p.0
            })
            .collect();
        assert_eq!(order, [1, 0, 1, 0]);
    }

    #[test]
    fn standby_and_failed_paths_wait_and_no_room_means_no_choice() {
        let mut paths = [view(0, 60_000, 0, 20, true), view(1, 60_000, 0, 20, true)];
        paths[0].state = PathState::Standby;
        let mut s = PicoquicRr::new(2);
        assert_eq!(s.select(&ctx(&paths)), Some(PathId(1)));
        paths[1].state = PathState::PotentiallyFailed;
        assert_eq!(s.select(&ctx(&paths)), None);
        paths[0].state = PathState::Active;
        paths[0].can_send = false;
        assert_eq!(s.select(&ctx(&paths)), None);
    }
}
