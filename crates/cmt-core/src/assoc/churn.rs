//! Paths that come and go: an interface gets an address mid-association, or loses
//! one. The embedder says so — the simulator from a scenario's events, the runtime when
//! the machine's addresses change — and the association follows at once rather than
//! through timeouts: a removed path stops carrying data immediately and what was in
//! flight on it is retransmitted on the others one round trip later, once the SACKs
//! for what reached the peer had time to come back on the other paths (RFC 5061
//! §5.2's DEL-IP asks the sender to move outstanding data off a deleted address, not
//! to wait for its T3 timer); an added path is verified
//! first (RFC 9260 §5.4: a HEARTBEAT with a nonce) and carries data only after that,
//! starting from the initial window and a fresh RTO like a new association's path.
//! Paths keep their index for the whole association: a removed one stays in the table,
//! state [`PathState::Removed`], and may be added again.

use super::Association;
use crate::event::Observer;
use crate::path::{Cuc, Recovery, Sending, Timers};
use crate::rtt::RttEstimator;
use crate::time::Time;
use crate::view::{PathId, PathState};

impl<O: Observer> Association<O> {
    /// Path `id`'s address is gone. It is neither used nor probed from now until
    /// [`add_path`](Self::add_path), its timers stop, and its data in flight is marked
    /// for retransmission on the other paths one round trip later. Returns whether anything changed (`false` for an
    /// unknown or already removed path).
    pub fn remove_path(&mut self, now: Time, id: PathId) -> bool {
        if self
            .paths
            .get(id.0)
            .is_none_or(|p| p.state == PathState::Removed)
        {
            return false;
        }
        self.views_but = None;
        // Out of the candidates first, so nothing is moved back onto it.
        self.set_state(now, id, PathState::Removed);
        let grace = self.handover_grace(id);
        let p = &mut self.paths[id];
        p.timers = Timers::default();
        p.sending.rtt_probe = None;
        if p.out.flight > 0 {
            p.timers.set_t3(Some(now + grace));
        }
        self.new_opportunity();
        true
    }

    /// How long a removed path's chunks in flight wait before they are resent on the
    /// others: the largest SRTT of the paths that remain (the removed path's RTO when
    /// none has one yet). Some of them reached the peer just before the address went
    /// away and only their SACKs were lost with it; within that round trip the SACKs the
    /// peer sends on the other paths acknowledge them. Resending them at once would
    /// send them twice and, worse, their acks would then be taken for acks of copies
    /// sent on the new path, with TSNs above that path's own chunks in flight: CMT's
    /// split fast retransmit would count those as missing and retransmit them
    /// spuriously, cutting the new path's window (measured: 45 spurious fast
    /// retransmissions on the failover study's second path; decision D33).
    fn handover_grace(&self, removed: PathId) -> crate::time::Duration {
        (0..self.paths.len())
            .filter(|&i| i != removed.0 && self.paths[i].carries_data())
            .filter_map(|i| self.paths[i].rtt.srtt())
            .max()
            .unwrap_or_else(|| self.paths[removed].rtt.rto())
    }

    /// Path `id`'s address is there (again). The path is verified with a HEARTBEAT now
    /// and carries data from its HEARTBEAT-ACK on, with the initial window and RTO
    /// (without heartbeats it is taken as verified at once). Returns whether anything
    /// changed (`false` for an unknown path or one that is not removed).
    pub fn add_path(&mut self, now: Time, id: PathId) -> bool {
        if self
            .paths
            .get(id.0)
            .is_none_or(|p| p.state != PathState::Removed)
        {
            return false;
        }
        self.views_but = None;
        // Back before its grace ran out: what it still had in flight is moved now (the
        // new address starts afresh and is not verified yet).
        self.mark_in_flight(now, id, false);
        let (cfg, initial) = (&self.cfg, self.cfg.initial_cwnd());
        let p = &mut self.paths[id];
        p.rtt = RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max);
        p.cc.set_cwnd(initial);
        p.recovery = Recovery::default();
        p.cuc = Cuc::default();
        p.sending = Sending::default();
        p.timers = Timers::default();
        p.losses.error_count = 0;
        p.heard = None;
        if self.cfg.heartbeats {
            self.set_state(now, id, PathState::Unconfirmed);
            self.paths[id].timers.set_hb_due(Some(now));
        } else {
            self.set_state(now, id, PathState::Active);
        }
        self.cwnd_event(now, id);
        self.new_opportunity();
        true
    }
}
