//! Whether an association is up, and how it ended when it did not end gracefully (a
//! graceful close is [`Closing`](super::Closing)'s): its timers gave up (RFC 9260
//! §8.1–8.2), it was aborted, the peer violated the protocol (§9.1) or stayed silent for
//! the outage tolerance (docs/algorithms.md §1.7).

use super::Association;
use crate::event::{Event, Observer};
use crate::time::Time;

/// Whether the association is up or how it ended badly (a graceful close is tracked by
/// [`Closing`](super::Closing) while up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lifecycle {
    /// Established (possibly shutting down gracefully).
    Up,
    /// Failed: the error count passed Association.Max.Retrans or the application
    /// aborted.
    Failed,
    /// We aborted because the peer violated the protocol (RFC 9260 §9.1, cause 13).
    PeerViolated,
    /// Outage handling: nothing was heard from the peer for the outage tolerance.
    PeerSilent,
    /// The peer's ABORT ended it, with its error cause if it gave one.
    PeerAborted(Option<u16>),
}

impl<O: Observer> Association<O> {
    /// True once the association has failed (error count above Association.Max.Retrans,
    /// or an ABORT arrived).
    pub fn is_failed(&self) -> bool {
        self.lifecycle != Lifecycle::Up
    }
    /// True when the association failed because nothing was heard from the peer, on
    /// any path, for the outage tolerance ([`Config::outage`](crate::config::Config::outage)).
    pub fn peer_silent(&self) -> bool {
        self.lifecycle == Lifecycle::PeerSilent
    }
    /// True when we aborted because the peer violated the protocol (e.g. acknowledged
    /// data never sent).
    pub fn peer_violated(&self) -> bool {
        self.lifecycle == Lifecycle::PeerViolated
    }
    /// True when the failure was the peer's ABORT (RFC 9260 §9.1), not our timers.
    pub fn peer_aborted(&self) -> bool {
        matches!(self.lifecycle, Lifecycle::PeerAborted(_))
    }
    /// The error cause code the peer's ABORT carried (RFC 9260 §3.3.10).
    pub fn peer_abort_cause(&self) -> Option<u16> {
        match self.lifecycle {
            Lifecycle::PeerAborted(cause) => cause,
            _ => None,
        }
    }
    /// Ends the association as `how` (once: a later failure changes nothing).
    pub(super) fn fail(&mut self, now: Time, how: Lifecycle) {
        if self.lifecycle == Lifecycle::Up {
            self.lifecycle = how;
            self.obs.event(now, &Event::AssociationFailed);
        }
    }
}
