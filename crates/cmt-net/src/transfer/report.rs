//! What the runtime counts per path and what a finished transfer reports.

use std::net::SocketAddr;

use cmt_core::{Event, Observer, PathId, SendKind, Time};
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
}

/// Copies the round-trip times of the paths that have counters into them (for a
/// progress report or the final one).
pub(super) fn note_rtts(assoc: &mut cmt_core::Association<Counters>) {
    let ms = |d: cmt_core::Duration| d.as_nanos() as f64 / 1e6;
    let counted = assoc.observer().paths.len().min(assoc.num_paths());
    for i in 0..counted {
        let v = assoc.path(PathId(i));
        let p = assoc.observer_mut().path(PathId(i));
        p.srtt_ms = v.srtt.map(ms);
        p.min_rtt_ms = v.min_rtt.map(ms);
    }
}

impl Counters {
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
