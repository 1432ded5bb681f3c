//! Paths that come and go: an interface gets an address mid-association, or loses
//! one. The embedder says so — the simulator from a scenario's events, the runtime when
//! the machine's addresses change — and the association follows at once rather than
//! through timeouts: a removed path stops carrying data immediately and what was in
//! flight on it is retransmitted on the others (RFC 5061 §5.2's DEL-IP, which asks the
//! sender to move outstanding data off a deleted address); an added path is verified
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
    /// Path `id`'s address is gone. Its data in flight is marked for retransmission on
    /// the other paths at once, its timers stop, and it is neither used nor probed until
    /// [`add_path`](Self::add_path). Returns whether anything changed (`false` for an
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
        // First out of the candidates, so nothing is moved back onto it.
        self.set_state(now, id, PathState::Removed);
        self.mark_in_flight(now, id, false);
        let p = &mut self.paths[id];
        p.timers = Timers::default();
        p.sending.rtt_probe = None;
        self.new_opportunity();
        true
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
            self.paths[id].timers.hb_due = Some(now);
        } else {
            self.set_state(now, id, PathState::Active);
        }
        self.cwnd_event(now, id);
        self.new_opportunity();
        true
    }
}
