//! Backup paths: a path marked backup carries no data — neither new data nor
//! retransmissions, nor a redundant scheduler's copies — while a regular path is
//! ACTIVE, and is used like any other path once none is (every regular path
//! potentially failed or inactive). Its heartbeats go on meanwhile, so its state and RTT
//! are known when it is needed. This is the backup flag of MPTCP (RFC 8684 §3.3.8,
//! MP_PRIO) and the "handover" mode of iOS's multipath service; SCTP has no such flag —
//! RFC 9260 only names a primary path — so the rule is ours (docs/algorithms.md, decision
//! D32).

use super::Association;
use crate::event::Observer;
use crate::view::{PathId, PathState, PathView};

impl<O: Observer> Association<O> {
    /// Marks path `path` as a backup (`true`) or a regular path (`false`); paths start
    /// regular. May change at any time (as MPTCP's MP_PRIO does); data already in
    /// flight on a path that becomes backup is acknowledged or recovered as usual.
    pub fn set_backup(&mut self, path: PathId, backup: bool) {
        self.views_but = None;
        if let Some(p) = self.paths.get_mut(path.0) {
            p.backup = backup;
        }
    }

    /// Whether path `path` is a backup path.
    pub fn is_backup(&self, path: PathId) -> bool {
        self.paths.get(path.0).is_some_and(|p| p.backup)
    }

    /// Whether path `i` is held in reserve now: a backup path that is ACTIVE while some
    /// regular path is ACTIVE too.
    pub(super) fn standby(&self, i: usize) -> bool {
        let p = &self.paths[i];
        p.backup
            && p.state == PathState::Active
            && self
                .paths
                .iter()
                .any(|r| !r.backup && r.state == PathState::Active)
    }

    /// `view` as schedulers and policies see it: a path held in reserve shows
    /// [`PathState::Standby`] and cannot send; under RACK-TLP a path whose timeout has
    /// not been answered yet takes no new data ([`Self::in_tcp_loss`]).
    pub(super) fn reserve(&self, mut view: PathView) -> PathView {
        if self.standby(view.id.0) {
            view.state = PathState::Standby;
            view.can_send = false;
        }
        if self.in_tcp_loss(view.id.0) {
            view.can_send = false;
        }
        view
    }

    /// TCP's Loss state, kept under RACK-TLP (decision D52 (8)): after a path's
    /// retransmission timeout, nothing new goes to it until one of its own chunks is
    /// acknowledged there (its error count cleared). A Linux subflow enters Loss with a
    /// window of one packet and its retransmitted head in flight, so it sends nothing
    /// new until an ack comes on it (`tcp_enter_loss`); here the acknowledgement of a
    /// copy another path carried would otherwise free the window of a path that has
    /// said nothing since its timeout.
    pub(super) fn in_tcp_loss(&self, i: usize) -> bool {
        self.cfg.recovery == crate::config::Recovery::RackTlp
            && self.paths[i].losses.error_count > 0
            && self.paths[i].losses.last_timeout.is_some()
    }
}
