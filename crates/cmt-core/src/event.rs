//! The observer interface: every observable protocol event goes through [`Observer`].
//!
//! The simulator's metrics recorder and the runtime's statistics are both observers, so
//! they see exactly the same events from the same code.

use crate::time::{Duration, Time};
use crate::view::{PathId, PathState};

/// Why a DATA chunk was (re)sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendKind {
    /// First transmission.
    New,
    /// Fast retransmission (missing reports reached `dupthresh`).
    FastRetransmit,
    /// Retransmission after a T3-rtx timeout.
    TimeoutRetransmit,
    /// A scheduler's extra copy of a chunk sent on another path (redundant, JAPS).
    Copy,
}

/// One protocol event. TSNs are unwrapped (64-bit) so observers never see wrap-around.
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// A DATA chunk left on `path`.
    DataSent {
        /// Path used.
        path: PathId,
        /// TSN.
        tsn: u64,
        /// User bytes.
        bytes: u32,
        /// New data or which kind of retransmission.
        kind: SendKind,
    },
    /// A DATA chunk arrived (receiver side), before any buffering decision.
    DataReceived {
        /// Path it arrived on.
        path: PathId,
        /// TSN.
        tsn: u64,
        /// User bytes.
        bytes: u32,
        /// Already received before (or already delivered).
        duplicate: bool,
    },
    /// A chunk was handed to the application in order.
    Delivered {
        /// TSN.
        tsn: u64,
        /// User bytes.
        bytes: u32,
        /// Path the delivered copy arrived on.
        path: PathId,
        /// When it arrived (delivery time minus this = reordering latency).
        arrived: Time,
    },
    /// The receiver discarded a new chunk because the receive buffer was full.
    DataDropped {
        /// Path it arrived on.
        path: PathId,
        /// TSN.
        tsn: u64,
        /// User bytes.
        bytes: u32,
    },
    /// A chunk was marked for fast retransmission.
    FastRetransmit {
        /// Path of its last transmission (where the loss happened).
        path: PathId,
        /// TSN.
        tsn: u64,
    },
    /// An ECN Echo cut a path's window (sender side; at most once per window).
    CongestionMarked {
        /// Path of the marked TSN's latest transmission.
        path: PathId,
        /// The marked TSN.
        tsn: u64,
    },
    /// The T3-rtx timer of a path expired.
    Timeout {
        /// Path.
        path: PathId,
        /// RTO after back-off.
        rto: Duration,
    },
    /// A path's cwnd or ssthresh changed.
    CwndChanged {
        /// Path.
        path: PathId,
        /// New cwnd, bytes.
        cwnd: u64,
        /// New ssthresh, bytes.
        ssthresh: u64,
        /// A step of a window reduction already under way (Proportional Rate
        /// Reduction's per-ack window and its end), not a reduction of its own.
        in_reduction: bool,
    },
    /// Bytes held in the receive buffer changed (receiver side).
    RbufOccupancy {
        /// Bytes held out of order.
        held: u32,
    },
    /// The sender entered or left receive-buffer blocking: some path has cwnd space but
    /// the peer's window is smaller than the next chunk (docs/algorithms.md §1.2).
    RwndBlocked {
        /// Whether the sender is now blocked.
        blocked: bool,
    },
    /// A path changed state (ACTIVE / PF / INACTIVE).
    PathStateChanged {
        /// Path.
        path: PathId,
        /// New state.
        state: PathState,
    },
    /// A new RTT measurement was taken.
    RttSample {
        /// Path.
        path: PathId,
        /// Measured RTT.
        rtt: Duration,
        /// SRTT after the update.
        srtt: Duration,
        /// RTO after the update.
        rto: Duration,
    },
    /// Receiver-driven CMT, sender side: a newer rate advert set a path's rate.
    RateAdvertApplied {
        /// Path.
        path: PathId,
        /// Advertised rate, bytes/s.
        rate: f64,
    },
    /// A SACK was sent (receiver side).
    SackSent {
        /// Path used.
        path: PathId,
        /// Number of gap blocks it carried.
        gap_blocks: u16,
    },
    /// The association failed (error count above Association.Max.Retrans).
    AssociationFailed,
    /// The association closed gracefully (SHUTDOWN sequence done).
    AssociationClosed,
}

/// Receives every [`Event`] of an association.
pub trait Observer {
    /// Called once per event, at the time it happens.
    fn event(&mut self, now: Time, event: &Event);
}

/// Ignores everything.
impl Observer for () {
    fn event(&mut self, _: Time, _: &Event) {}
}

/// Collects everything (handy in tests).
impl Observer for Vec<(Time, Event)> {
    fn event(&mut self, now: Time, event: &Event) {
        self.push((now, event.clone()));
    }
}
