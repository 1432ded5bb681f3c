//! What an acknowledgement proves about a path: its error counter is cleared and a
//! potentially-failed or inactive path comes back (RFC 9260 §8.2–8.3; CMT-PF,
//! docs/algorithms.md §1.6 (b)), by the RFC's rule or ns-2.35's.

use super::sack::AckScratch;
use super::Association;
use crate::event::Observer;
use crate::time::Time;
use crate::view::{PathId, PathState};

impl<O: Observer> Association<O> {
    /// Error counters and PF/INACTIVE recovery for paths that got new acks (RFC 9260
    /// §8.2; docs/algorithms.md §1.6 (b): PF → ACTIVE when a TSN transmitted once is acked).
    ///
    /// Under the RFC profile only an ack of a chunk still outstanding on the path counts
    /// (RFC 9260 §8.3 speaks of "an outstanding TSN"): a chunk a timeout marked for
    /// retransmission may have arrived before the path failed, its SACK lost with the
    /// path, and be acked later through another path — that proves nothing about the
    /// path now (decision D32). Under the ns-2.35 profile, ns-2's rule (`ns2_alive`: a
    /// cumulative ack of a chunk neither gap-acked before nor marked by a timeout, with
    /// CMT-PF only of one sent once; with CMT-PF a gap ack of a chunk sent once).
    pub(super) fn update_paths_after_ack(&mut self, now: Time, s: &AckScratch) {
        let ns2 = self.ns2();
        for i in 0..self.paths.len() {
            let a = &s.path[i];
            let alive = if ns2 {
                a.ns2_alive
            } else {
                a.saw_outstanding_ack
            };
            if !alive || !self.paths[i].carries_data() {
                continue;
            }
            self.paths[i].losses.error_count = 0;
            if self.paths[i].state != PathState::Active {
                self.paths[i].timers.set_hb_pending(None);
                self.set_state(now, PathId(i), PathState::Active);
            }
        }
    }
}
