//! What the runtime counts per path and what a finished transfer reports.

use std::net::SocketAddr;

use cmt_core::{Event, Observer, PathId, PathState, SendKind, Time};
use cmt_sim::packet_trace::PacketTrace;

/// Per-path counters kept by the runtime's observer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathCount {
    /// DATA packets sent.
    pub sent_packets: u64,
    /// Payload bytes sent, retransmissions included.
    pub sent_bytes: u64,
    /// DATA packets retransmitted.
    pub retransmissions: u64,
    /// Packets carrying DATA that arrived on this path's local address.
    pub received_data_packets: u64,
    /// DATA payload bytes in them (duplicates included).
    pub received_bytes: u64,
    /// The path's smoothed round-trip time (ms) when last looked at (progress reports,
    /// the end), if measured.
    pub srtt_ms: Option<f64>,
    /// The smallest round-trip time (ms) measured on the path.
    pub min_rtt_ms: Option<f64>,
    /// With ECN: window cuts for the peer's ECN Echoes (sender side).
    pub ecn_cuts: u64,
    /// With ECN: datagrams that arrived on this path marked Congestion Experienced.
    pub ce_received: u64,
}

/// The observer of a runtime association.
#[derive(Debug, Default)]
pub struct Counters {
    /// Per path.
    pub paths: Vec<PathCount>,
    /// Bytes delivered in order.
    pub delivered: u64,
    /// The per-packet trace (`--trace`), and whether this end is the sender.
    pub trace: Option<(PacketTrace, bool)>,
    /// How long delivered chunks waited for earlier ones (receiving end).
    pub reorder: super::reorder::ReorderStats,
    /// Per path, since its route last changed: the smallest RTT sample and the smoothed
    /// RTT after the latest one (ns).
    rtts: Vec<(Option<u64>, Option<u64>)>,
}

/// Copies the round-trip times of the paths that have counters into them (for a
/// progress report or the final one): those measured since the path's route last
/// changed (a receiver's path that moved to a relay's or NAT's address keeps none of
/// the round trips to the address it had before).
pub(super) fn note_rtts(assoc: &mut cmt_core::Association<Counters>) {
    let ms = |ns: u64| ns as f64 / 1e6;
    let o = assoc.observer_mut();
    for i in 0..o.paths.len() {
        let (min, srtt) = o.rtts.get(i).copied().unwrap_or_default();
        o.paths[i].srtt_ms = srtt.map(ms);
        o.paths[i].min_rtt_ms = min.map(ms);
    }
}

impl Counters {
    /// Forgets the round trips measured on `path` (its route changed).
    pub(super) fn forget_rtt(&mut self, path: PathId) {
        if let Some(r) = self.rtts.get_mut(path.0) {
            *r = (None, None);
        }
    }

    fn rtt_sample(&mut self, path: PathId, rtt: cmt_core::Duration, srtt: cmt_core::Duration) {
        if self.rtts.len() <= path.0 {
            self.rtts.resize(path.0 + 1, (None, None));
        }
        let r = &mut self.rtts[path.0];
        r.0 = Some(r.0.map_or(rtt.as_nanos(), |m| m.min(rtt.as_nanos())));
        r.1 = Some(srtt.as_nanos());
        self.path(path);
    }

    pub(super) fn path(&mut self, path: PathId) -> &mut PathCount {
        if self.paths.len() <= path.0 {
            self.paths.resize(path.0 + 1, PathCount::default());
        }
        &mut self.paths[path.0]
    }
}

impl Observer for Counters {
    fn event(&mut self, now: Time, e: &Event) {
        match &mut self.trace {
            Some((t, true)) => t.sender_event(now, e),
            Some((t, false)) => t.receiver_event(now, e),
            None => {}
        }
        match *e {
            Event::DataSent {
                path, bytes, kind, ..
            } => {
                let p = self.path(path);
                p.sent_packets += 1;
                p.sent_bytes += bytes as u64;
                if matches!(kind, SendKind::FastRetransmit | SendKind::TimeoutRetransmit) {
                    p.retransmissions += 1;
                }
            }
            Event::Delivered { bytes, arrived, .. } => {
                self.delivered += bytes as u64;
                self.reorder.delivered(now.saturating_since(arrived));
            }
            Event::RbufOccupancy { held } => self.reorder.held(held),
            Event::CongestionMarked { path, .. } => self.path(path).ecn_cuts += 1,
            Event::RttSample {
                path, rtt, srtt, ..
            } => self.rtt_sample(path, rtt, srtt),
            // A path added again starts its estimate afresh (the core's too).
            Event::PathStateChanged {
                path,
                state: PathState::Unconfirmed,
            } => self.forget_rtt(path),
            _ => {}
        }
    }
}

/// What a finished transfer reports.
#[derive(Clone, Debug)]
pub struct Report {
    /// The file's length (what the sender sent, the receiver stored).
    pub bytes: u64,
    /// Seconds from the first packet to the graceful close.
    pub seconds: f64,
    /// SHA-256 of the data, hex.
    pub sha256: String,
    /// Per path counters (sender side: what it sent).
    pub paths: Vec<PathCount>,
    /// Packets that did not parse or carried a wrong verification tag.
    pub rejected: u64,
    /// Whether receiver-driven rate control was negotiated (see
    /// [`Options::receiver_rates`](super::Options::receiver_rates)).
    pub receiver_rates: bool,
    /// Whether explicit congestion notification was in use (both ends offered it).
    pub ecn: bool,
    /// Path i's (local, remote) addresses.
    pub routes: Vec<(SocketAddr, SocketAddr)>,
    /// Sender: the receiver confirmed it stored exactly these bytes (same length and
    /// SHA-256, a FILE-DIGEST bundled with its SHUTDOWN ACK). Receiver: it sent that
    /// confirmation. False with a peer that does not support FILE-DIGEST.
    pub confirmed: bool,
    /// Datagrams and the system calls that moved them (batching at work).
    pub io: crate::io::IoCounts,
    /// Where in the file this transfer started: 0, or the offset a resumed transfer
    /// continued from ([`Options::resume`](super::Options::resume)).
    pub resumed_from: u64,
    /// Receiver serving a directory (`recv --dir`): where the file was stored.
    pub stored_as: Option<std::path::PathBuf>,
    /// Receiver: how long delivered chunks waited for earlier ones.
    pub reordering: Option<super::reorder::Reordering>,
    /// Sender that asked for them ([`SendOptions::return_arrivals`](super::SendOptions::return_arrivals))
    /// of a receiver that returns them: each DATA packet's arrival, by sequence number
    /// (those whose SACKs were all lost are missing).
    pub arrivals: Option<Vec<super::arrivals::ArrivalRecord>>,
}

impl Report {
    /// Goodput in Mbit/s: the bytes this transfer moved (those after
    /// [`resumed_from`](Self::resumed_from)) over its time.
    pub fn goodput_mbps(&self) -> f64 {
        self.moved() as f64 * 8.0 / self.seconds.max(1e-9) / 1e6
    }

    /// Bytes this transfer moved (a resumed one: what was missing).
    pub fn moved(&self) -> u64 {
        self.bytes.saturating_sub(self.resumed_from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cmt_core::Duration;

    fn sample(c: &mut Counters, path: usize, rtt_ms: u64, srtt_ms: u64) {
        let ev = Event::RttSample {
            path: PathId(path),
            rtt: Duration::from_millis(rtt_ms),
            srtt: Duration::from_millis(srtt_ms),
            rto: Duration::from_secs(1),
        };
        c.event(Time::ZERO, &ev);
    }

    fn rtts(c: &Counters, path: usize) -> (Option<u64>, Option<u64>) {
        let (min, srtt) = c.rtts[path];
        (min.map(|n| n / 1_000_000), srtt.map(|n| n / 1_000_000))
    }

    #[test]
    fn round_trips_count_only_since_the_paths_route_last_changed() {
        let mut c = Counters::default();
        sample(&mut c, 1, 30, 30);
        sample(&mut c, 1, 20, 28);
        sample(&mut c, 1, 50, 31);
        assert_eq!(rtts(&c, 1), (Some(20), Some(31)));
        // The receiver follows the path to a relay's address: the old round trips go.
        c.forget_rtt(PathId(1));
        assert_eq!(rtts(&c, 1), (None, None));
        sample(&mut c, 1, 80, 80);
        assert_eq!(rtts(&c, 1), (Some(80), Some(80)));
        // A path added again starts afresh, as the core's estimate does.
        let added = Event::PathStateChanged {
            path: PathId(1),
            state: PathState::Unconfirmed,
        };
        c.event(Time::ZERO, &added);
        assert_eq!(rtts(&c, 1), (None, None));
        // Another path is untouched; the report's fields follow.
        sample(&mut c, 0, 10, 10);
        assert_eq!(rtts(&c, 0), (Some(10), Some(10)));
        assert_eq!(c.paths.len(), 2);
    }
}
