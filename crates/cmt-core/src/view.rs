//! What algorithms see of a path: its index, its reachability state and a read-only
//! snapshot of its sender state ([`PathView`]). Kept apart from the sender's own path
//! state so that schedulers, policies and controllers depend on this module only.

use crate::time::{Duration, Time};

/// Index of a path within an association (0-based, in configuration order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct PathId(pub usize);

/// Reachability state of a destination (RFC 9260 §8.2, CMT-PF docs/algorithms.md §1.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathState {
    /// Usable for new data and retransmissions.
    Active,
    /// Potentially failed: one or more timeouts; probed with HEARTBEATs only.
    PotentiallyFailed,
    /// Failed: error count above Path.Max.Retrans.
    Inactive,
    /// An address not verified yet (RFC 9260 §5.4): probed with a HEARTBEAT at once and
    /// given no data until the HEARTBEAT-ACK carrying its nonce returns.
    Unconfirmed,
    /// An address the endpoint no longer has — a deleted interface (RFC 5061 DEL-IP): it
    /// carries nothing and is not probed until it is added again.
    Removed,
    /// A backup path held in reserve: reachable (it is probed like any idle path) but
    /// given no data while a regular path is ACTIVE — MPTCP's backup flag (RFC 8684
    /// §3.3.8). Only views show it; the path itself is ACTIVE, and is shown so once no
    /// regular path is.
    Standby,
}

/// What schedulers and retransmission policies may read about a path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathView {
    /// Which path.
    pub id: PathId,
    /// Reachability.
    pub state: PathState,
    /// Congestion window, bytes.
    pub cwnd: u64,
    /// Slow-start threshold, bytes.
    pub ssthresh: u64,
    /// Bytes in flight (sent, not acked, not marked for retransmission), counted as DATA
    /// chunk bytes (16-byte header and padding included).
    pub flight: u64,
    /// Bytes given to the path and not sent yet: its share of Linux MPTCP's subflow
    /// write queues (`send_buffer = "linux"`); 0 otherwise.
    pub queued: u64,
    /// Smoothed RTT (None before the first sample).
    pub srtt: Option<Duration>,
    /// RTT variation.
    pub rttvar: Duration,
    /// Smallest RTT sample.
    pub min_rtt: Option<Duration>,
    /// Largest SRTT so far.
    pub max_srtt: Option<Duration>,
    /// Current RTO.
    pub rto: Duration,
    /// T3-rtx timeouts so far.
    pub timeouts: u32,
    /// Consecutive timeouts (and unanswered HEARTBEATs) since the path last got an
    /// acknowledgement: RFC 9260's path error counter, TCP's `t_rxtshift`.
    pub error_count: u32,
    /// Time of the latest timeout.
    pub last_timeout: Option<Time>,
    /// Loss rate: the configured one when set
    /// ([`Association::set_destination_loss_rate`](crate::Association::set_destination_loss_rate),
    /// docs/algorithms.md §1.5 "oracle"), else the estimate: EWMA (gain 1/8) of 0 per acked chunk and
    /// 1 per chunk marked for retransmission (docs/algorithms.md §1.5, "estimated"; decision D11).
    pub loss_rate: f64,
    /// The path's capacity in bytes/s when the embedder knows it
    /// ([`Association::set_destination_capacity`](crate::Association::set_destination_capacity));
    /// the simulator gives the slowest forward link's rate.
    pub capacity: Option<f64>,
    /// The rate the receiver advertised for the path, bytes/s (receiver-driven CMT).
    pub advertised_rate: Option<f64>,
    /// True if new data may go on this path now (ACTIVE, `flight < cwnd`, Max.Burst
    /// budget left). The peer window is checked by the core before asking.
    pub can_send: bool,
}

impl PathView {
    /// An ACTIVE path `i` that can send, with a 4380-byte window, nothing in flight,
    /// no RTT sample yet, an RTO of 1 s and no losses: the starting point of decision
    /// tables and benchmarks, which then set what they test.
    pub fn idle(i: usize) -> PathView {
        PathView {
            id: PathId(i),
            state: PathState::Active,
            cwnd: 4380,
            ssthresh: 65536,
            flight: 0,
            queued: 0,
            srtt: None,
            rttvar: Duration::ZERO,
            min_rtt: None,
            max_srtt: None,
            rto: Duration::from_secs(1),
            timeouts: 0,
            error_count: 0,
            last_timeout: None,
            loss_rate: 0.0,
            capacity: None,
            advertised_rate: None,
            can_send: true,
        }
    }
}
