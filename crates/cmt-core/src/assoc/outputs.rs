//! What the association hands its driver besides events: the packets to send and the
//! counters that are not protocol events.

use crate::packet::Packet;
use crate::view::PathId;

/// A packet the driver must send on `path`.
#[must_use]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Which path (local/remote address pair) to use.
    pub path: PathId,
    /// The packet.
    pub packet: Packet,
    /// Send it ECN-capable, ECT(0) in the IP header (DATA when ECN is in use).
    pub ect: bool,
}

/// Counters the driver may want that are not protocol events.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AssocStats {
    /// Packets dropped because their verification tag was wrong.
    pub bad_vtag: u64,
    /// Chunks ignored because they made no sense (e.g. a SACK for unsent TSNs).
    pub bogus_chunks: u64,
    /// Scheduler choices the core refused (path could not send).
    pub refused_choices: u64,
    /// Retransmission destinations chosen among two or more candidate paths.
    pub rtx_decisions: u64,
    /// … of which two or more candidates shared the largest cwnd (where RTX-CWND's
    /// rule alone does not decide).
    pub rtx_cwnd_ties: u64,
    /// … of which the path chosen did not have the largest cwnd (RTX-CWND would have
    /// chosen otherwise).
    pub rtx_not_largest_cwnd: u64,
    /// Packets with DATA that arrived marked Congestion Experienced (receiver side).
    pub ce_marked: u64,
    /// ECN Echo chunks received for TSNs sent (sender side).
    pub ecn_echoes: u64,
    /// Window cuts those echoes caused (at most one per window of a path).
    pub ecn_cuts: u64,
    /// Tail loss probes sent (RACK-TLP).
    pub tail_loss_probes: u64,
    /// Windows collapsed by QUIC's persistent congestion (RFC 9002 §7.6).
    pub persistent_congestion: u64,
    /// Chunks queued to be sent again on another path by reinjection.
    pub reinjected: u64,
}
