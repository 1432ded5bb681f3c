//! What an acknowledgement proves about a path: its error counter is cleared and a
//! potentially-failed or inactive path comes back (RFC 9260 §8.2–8.3; CMT-PF,
//! docs/algorithms.md §1.6 (b)), by the RFC's rule or ns-2.35's; and, with outage
//! handling, what its return after an outage sets going (§1.7).

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
                let outage = self.in_outage();
                self.paths[i].timers.set_hb_pending(None);
                self.set_state(now, PathId(i), PathState::Active);
                self.on_return(now, PathId(i), outage);
            }
        }
    }

    /// Whether every path that carries data is down (PF or INACTIVE): an outage.
    pub(super) fn in_outage(&self) -> bool {
        self.paths
            .iter()
            .filter(|p| p.carries_data())
            .all(|p| p.state != PathState::Active)
    }

    /// Return after an outage (outage handling under the RFC profile; docs/algorithms.md
    /// §1.7, D44): path `id` answered after being PF or INACTIVE. What is still in
    /// flight on a path that is down was sent while it was down and is resent now — the
    /// oldest missing chunk first, on the path that answered — instead of when that
    /// path's backed-off T3 expires, up to a probe interval later, while the receiver's
    /// window waits for it. When every path was down (`outage`), the paths still down are
    /// probed now instead of at their next backed-off probe: whatever cut them all (a
    /// radio, a cable, a router) has probably healed for them too.
    pub(super) fn on_return(&mut self, now: Time, id: PathId, outage: bool) {
        if self.cfg.outage.is_none() || self.ns2() {
            return;
        }
        for i in (0..self.paths.len()).filter(|&i| i != id.0) {
            let p = &self.paths[i];
            if !p.carries_data() || p.state == PathState::Active {
                continue;
            }
            self.mark_in_flight(now, PathId(i), false);
            if outage {
                self.probe_again(now, PathId(i));
            }
        }
    }

    /// The host saw the link under path `id` come up (an interface watcher's report):
    /// unless the path is ACTIVE it is probed now, so it is back within a round trip
    /// instead of at its next backed-off probe (up to a probe interval later). A
    /// report for a path that does not exist, or is ACTIVE, changes nothing.
    pub fn link_up(&mut self, now: Time, id: PathId) {
        if id.0 < self.paths.len() {
            self.now = now;
            self.probe_again(now, id);
        }
    }

    /// The host saw the link under path `id` go down (an interface watcher's report:
    /// no carrier, or the interface administratively down): nothing sent on it can
    /// arrive, so an ACTIVE path is taken out at once — potentially failed with CMT-PF,
    /// else inactive — and what it has in flight is resent on the other paths now
    /// instead of after its RTO, without counting a loss. Its probes go on; its link's
    /// return ([`link_up`](Self::link_up)) probes it at once.
    pub fn link_down(&mut self, now: Time, id: PathId) {
        let Some(p) = self.paths.get(id.0) else {
            return;
        };
        if !p.carries_data() {
            return;
        }
        self.now = now;
        if p.state == PathState::Active {
            let state = if self.cfg.pf_enabled {
                PathState::PotentiallyFailed
            } else {
                PathState::Inactive
            };
            self.set_state(now, id, state);
        }
        self.mark_in_flight(now, id, false);
        self.new_opportunity();
    }

    /// Probes path `id` now (a new HEARTBEAT, whatever one is pending) unless it is
    /// ACTIVE: its link came back, or another path's did.
    pub(super) fn probe_again(&mut self, now: Time, id: PathId) {
        let p = &mut self.paths[id];
        if !self.cfg.heartbeats || p.state == PathState::Active || !p.carries_data() {
            return;
        }
        p.timers.set_hb_pending(None);
        p.timers.set_hb_due(Some(now));
    }
}
