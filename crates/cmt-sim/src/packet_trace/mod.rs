//! The per-packet trace: one row per packet event, as ns-2's trace files and ns-3's
//! ascii traces give, for analysis outside cmtlab (`--trace FILE`).
//!
//! Rows come from three places: the sender's and the receiver's protocol events (the
//! same [`Event`]s the metrics see), the simulated network (drops, with their cause and
//! link), and SACKs arriving at the sender. The simulator and the real runtime write
//! the same columns; the runtime has no network rows (a real network does not say what
//! it dropped). Columns, in order:
//!
//! | column | meaning |
//! |---|---|
//! | `time_s` | time of the event, seconds (nanosecond resolution) since the start |
//! | `side` | `sender`, `receiver` or `network` |
//! | `path` | path index (0-based, in scenario order) |
//! | `path_name` | the path's name |
//! | `direction` | `data` (DATA, sender → receiver) or `ack` (SACK, receiver → sender) |
//! | `kind` | `send`, `retransmit`, `drop`, `arrive`, `deliver` or `timeout` |
//! | `cause` | `retransmit`: `fast` or `timeout`; `send`: `new` or `copy`; `drop`: `queue`, `loss`, `down` (network) or `rbuf` (receiver); `arrive`: `duplicate` for a chunk already received; else empty |
//! | `tsn` | the DATA chunk's TSN, or the SACK's cumulative TSN ack (unwrapped, 64-bit) |
//! | `bytes` | user bytes of the DATA chunk; empty on `ack` rows and timeouts |
//! | `cwnd` | the sender's cwnd on this path at the time, bytes (empty where the writer cannot know it: receiver rows of a real transfer) |
//! | `link` | the link direction of a network drop (`name/fwd` or `name/rev`); else empty |
//!
//! A DATA packet that bundles several chunks gives one row per chunk.

mod csv_sink;
#[cfg(feature = "parquet")]
mod parquet_sink;
mod qlog_sink;

use std::io;
use std::path::Path;

use cmt_core::{Chunk, Event, Packet, PathId, SendKind, Time};

/// Which end or part of the network a row comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The association's sender.
    Sender,
    /// The association's receiver.
    Receiver,
    /// The simulated network.
    Network,
}

impl Side {
    fn as_str(self) -> &'static str {
        match self {
            Side::Sender => "sender",
            Side::Receiver => "receiver",
            Side::Network => "network",
        }
    }
}

/// What happened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A first transmission (or a scheduler's copy).
    Send,
    /// A retransmission.
    Retransmit,
    /// Lost in the network or discarded by the receiver.
    Drop,
    /// Arrived at its end.
    Arrive,
    /// Handed to the application in order.
    Deliver,
    /// The path's T3-rtx timer expired.
    Timeout,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Send => "send",
            Kind::Retransmit => "retransmit",
            Kind::Drop => "drop",
            Kind::Arrive => "arrive",
            Kind::Deliver => "deliver",
            Kind::Timeout => "timeout",
        }
    }
}

/// One row, as the sinks write it.
#[derive(Clone, Debug, PartialEq)]
pub struct Row<'a> {
    /// Time since the start.
    pub time: Time,
    /// Where.
    pub side: Side,
    /// Path index.
    pub path: usize,
    /// Path name.
    pub path_name: &'a str,
    /// True for SACKs (receiver → sender), false for DATA.
    pub ack: bool,
    /// What.
    pub kind: Kind,
    /// Why (see the module table).
    pub cause: &'static str,
    /// TSN (unwrapped).
    pub tsn: Option<u64>,
    /// User bytes.
    pub bytes: Option<u32>,
    /// The sender's cwnd on the path.
    pub cwnd: Option<u64>,
    /// Link direction of a network drop.
    pub link: &'a str,
}

/// Where rows go: a CSV, Parquet or qlog file.
trait Sink: Send {
    fn row(&mut self, r: &Row<'_>) -> io::Result<()>;
    fn finish(self: Box<Self>) -> io::Result<()>;
}

/// A per-packet trace being written.
pub struct PacketTrace {
    sink: Option<Box<dyn Sink>>,
    path_names: Vec<String>,
    /// The sender's cwnd per path, when known.
    cwnd: Vec<Option<u64>>,
    /// The highest TSN seen, to unwrap the 32-bit TSNs of packets.
    last_tsn: Option<u64>,
    rows: u64,
    error: Option<io::Error>,
}

impl std::fmt::Debug for PacketTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketTrace")
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

/// The trace formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Comma-separated values with a header line.
    Csv,
    /// Apache Parquet (needs the `parquet` feature).
    Parquet,
    /// qlog 0.3, JSON-SEQ (`qlog_sink.rs`).
    Qlog,
}

impl Format {
    /// `.parquet` files are Parquet, `.qlog` and `.sqlog` files qlog, anything else CSV.
    pub fn of(path: &Path) -> Format {
        match path.extension().and_then(|e| e.to_str()) {
            Some(e) if e.eq_ignore_ascii_case("parquet") => Format::Parquet,
            Some(e) if e.eq_ignore_ascii_case("qlog") || e.eq_ignore_ascii_case("sqlog") => {
                Format::Qlog
            }
            _ => Format::Csv,
        }
    }
}

impl PacketTrace {
    /// A trace into `file` (created or truncated), as CSV, or Parquet for a `.parquet`
    /// name, or qlog for a `.qlog` / `.sqlog` name; `path_names` name the paths in order.
    pub fn create(file: &Path, path_names: Vec<String>) -> Result<Self, String> {
        let what = |e: io::Error| format!("--trace {}: {e}", file.display());
        let sink: Box<dyn Sink> = match Format::of(file) {
            Format::Csv => {
                let f = std::fs::File::create(file).map_err(what)?;
                Box::new(csv_sink::CsvSink::new(f).map_err(what)?)
            }
            Format::Qlog => {
                let f = std::fs::File::create(file).map_err(what)?;
                Box::new(qlog_sink::QlogSink::new(f).map_err(what)?)
            }
            #[cfg(feature = "parquet")]
            Format::Parquet => {
                let f = std::fs::File::create(file).map_err(what)?;
                Box::new(parquet_sink::ParquetSink::new(f).map_err(what)?)
            }
            #[cfg(not(feature = "parquet"))]
            Format::Parquet => {
                return Err(format!(
                    "--trace {}: this cmtlab was built without Parquet support \
                     (build with `--features parquet`, or give a .csv name)",
                    file.display()
                ))
            }
        };
        Ok(Self::with_sink(sink, path_names))
    }

    /// A CSV trace into any writer (tests, pipes).
    pub fn csv(out: Box<dyn io::Write + Send>, path_names: Vec<String>) -> io::Result<Self> {
        Ok(Self::with_sink(
            Box::new(csv_sink::CsvSink::new(out)?),
            path_names,
        ))
    }

    fn with_sink(sink: Box<dyn Sink>, path_names: Vec<String>) -> Self {
        PacketTrace {
            sink: Some(sink),
            cwnd: vec![None; path_names.len()],
            path_names,
            last_tsn: None,
            rows: 0,
            error: None,
        }
    }

    /// Names the paths, in order (for a trace created before the paths were known,
    /// e.g. before a real association's handshake); before the first event.
    pub fn set_path_names(&mut self, names: Vec<String>) {
        self.cwnd.resize(names.len(), None);
        self.path_names = names;
    }

    /// Sets the sender's cwnd of every path (before the first event).
    pub fn set_cwnds(&mut self, cwnds: impl IntoIterator<Item = u64>) {
        for (c, w) in self.cwnd.iter_mut().zip(cwnds) {
            *c = Some(w);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn write(
        &mut self,
        time: Time,
        side: Side,
        path: usize,
        ack: bool,
        kind: Kind,
        cause: &'static str,
        tsn: Option<u64>,
        bytes: Option<u32>,
        link: &str,
    ) {
        if self.error.is_some() {
            return;
        }
        let Some(sink) = self.sink.as_mut() else {
            return;
        };
        let row = Row {
            time,
            side,
            path,
            path_name: self.path_names.get(path).map_or("", String::as_str),
            ack,
            kind,
            cause,
            tsn,
            bytes,
            cwnd: self.cwnd.get(path).copied().flatten(),
            link,
        };
        match sink.row(&row) {
            Ok(()) => self.rows += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// A protocol event of the sender.
    pub fn sender_event(&mut self, now: Time, e: &Event) {
        match *e {
            Event::DataSent {
                path,
                tsn,
                bytes,
                kind,
            } => {
                self.last_tsn = Some(self.last_tsn.map_or(tsn, |t| t.max(tsn)));
                let (k, cause) = match kind {
                    SendKind::New => (Kind::Send, "new"),
                    SendKind::Copy => (Kind::Send, "copy"),
                    SendKind::FastRetransmit => (Kind::Retransmit, "fast"),
                    SendKind::TimeoutRetransmit => (Kind::Retransmit, "timeout"),
                };
                let s = Side::Sender;
                self.write(now, s, path.0, false, k, cause, Some(tsn), Some(bytes), "");
            }
            Event::Timeout { path, .. } => {
                let (s, k) = (Side::Sender, Kind::Timeout);
                self.write(now, s, path.0, false, k, "", None, None, "");
            }
            Event::CwndChanged { path, cwnd, .. } => {
                if let Some(c) = self.cwnd.get_mut(path.0) {
                    *c = Some(cwnd);
                }
            }
            _ => {}
        }
    }

    /// A protocol event of the receiver.
    pub fn receiver_event(&mut self, now: Time, e: &Event) {
        let r = Side::Receiver;
        match *e {
            Event::DataReceived {
                path,
                tsn,
                bytes,
                duplicate,
            } => {
                let cause = if duplicate { "duplicate" } else { "" };
                let k = Kind::Arrive;
                self.write(now, r, path.0, false, k, cause, Some(tsn), Some(bytes), "");
            }
            Event::Delivered {
                tsn, bytes, path, ..
            } => {
                let k = Kind::Deliver;
                self.write(now, r, path.0, false, k, "", Some(tsn), Some(bytes), "");
            }
            Event::DataDropped { path, tsn, bytes } => {
                let k = Kind::Drop;
                self.write(now, r, path.0, false, k, "rbuf", Some(tsn), Some(bytes), "");
            }
            Event::SackSent { path, .. } => {
                self.write(now, r, path.0, true, Kind::Send, "", None, None, "");
            }
            _ => {}
        }
    }

    /// The network lost `packet` on `path` at `link` for `cause` (`queue`, `loss`,
    /// `down`): a row per DATA chunk, or one for a SACK.
    pub fn network_drop(
        &mut self,
        now: Time,
        path: PathId,
        packet: &Packet,
        cause: &'static str,
        link: &str,
    ) {
        self.packet_rows(now, Side::Network, path, packet, Kind::Drop, cause, link);
    }

    /// `packet` arrived at the sender on `path`: a row for its SACK, if it has one.
    pub fn sender_received(&mut self, now: Time, path: PathId, packet: &Packet) {
        if packet.chunks.iter().any(|c| matches!(c, Chunk::Sack(_))) {
            self.packet_rows(now, Side::Sender, path, packet, Kind::Arrive, "", "");
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn packet_rows(
        &mut self,
        now: Time,
        side: Side,
        path: PathId,
        packet: &Packet,
        kind: Kind,
        cause: &'static str,
        link: &str,
    ) {
        let unwrap = |last: Option<u64>, wire: u32| match last {
            Some(t) => cmt_core::tsn::unwrap_tsn(t, wire),
            None => wire as u64,
        };
        for c in &packet.chunks {
            match c {
                Chunk::Data(d) => {
                    let (tsn, bytes) = (unwrap(self.last_tsn, d.tsn), d.payload.len() as u32);
                    let b = Some(bytes);
                    self.write(now, side, path.0, false, kind, cause, Some(tsn), b, link);
                }
                Chunk::Sack(s) => {
                    let tsn = Some(unwrap(self.last_tsn, s.cum_tsn));
                    self.write(now, side, path.0, true, kind, cause, tsn, None, link);
                }
                _ => {}
            }
        }
    }

    /// Writes what is buffered and closes the file; returns the rows written, or the
    /// first write error.
    pub fn finish(&mut self) -> io::Result<u64> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if let Some(sink) = self.sink.take() {
            sink.finish()?;
        }
        Ok(self.rows)
    }
}

impl Drop for PacketTrace {
    /// A trace dropped without [`finish`](PacketTrace::finish) — a transfer that
    /// failed — is still closed properly (what was written stays readable).
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// The column names, in order.
pub const COLUMNS: [&str; 11] = [
    "time_s",
    "side",
    "path",
    "path_name",
    "direction",
    "kind",
    "cause",
    "tsn",
    "bytes",
    "cwnd",
    "link",
];

/// `time` as seconds with nanosecond digits (exact, unlike a float).
fn seconds(time: Time) -> String {
    let ns = time.as_nanos();
    format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000)
}
