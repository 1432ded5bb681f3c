//! The qlog sink of the per-packet trace (`--trace FILE.qlog` or `.sqlog`): qlog 0.3
//! in its JSON-SEQ serialisation (RFC 7464 records: RS, one JSON text, LF), the form
//! qvis and the qlog tooling read, with each event's path in `data.path_id` as the
//! multipath QUIC qlog extension carries it.
//!
//! One qlog event per trace row, in the same order — `transport:packet_sent` (sends,
//! retransmissions and SACKs sent), `transport:packet_received` (arrivals),
//! `transport:packet_dropped` (drops), `transport:data_moved` (in-order delivery to
//! the application), `recovery:loss_timer_updated` (a T3-rtx expiry) — plus a
//! `recovery:metrics_updated` with the path's congestion window whenever a sender row
//! shows it changed. A DATA chunk is a packet numbered by its TSN; a SACK carries an
//! `ack` frame with its cumulative TSN. What qlog has no field for (which end, the
//! cause, the path's name, the link of a drop) is in `data.cmtlab`.

use std::io::{self, Write};

use serde_json::{json, Value};

use super::{Kind, Row, Side, Sink};

pub(super) struct QlogSink<W: io::Write> {
    out: io::BufWriter<W>,
    /// The congestion window last reported per path.
    cwnd: Vec<Option<u64>>,
}

impl<W: io::Write> QlogSink<W> {
    pub(super) fn new(out: W) -> io::Result<Self> {
        let mut s = QlogSink {
            out: io::BufWriter::new(out),
            cwnd: Vec::new(),
        };
        s.record(&json!({
            "qlog_version": "0.3",
            "qlog_format": "JSON-SEQ",
            "title": "cmtlab per-packet trace",
            "description": "one SCTP concurrent-multipath association: its sender, its \
                receiver and the network between them; DATA chunks are packets numbered \
                by TSN",
            "trace": {
                "title": "cmtlab",
                "vantage_point": { "name": "cmtlab", "type": "network" },
                "common_fields": {
                    "reference_time": 0.0,
                    "time_format": "relative",
                    "protocol_type": ["SCTP-CMT"],
                },
            },
        }))?;
        Ok(s)
    }

    fn record(&mut self, v: &Value) -> io::Result<()> {
        self.out.write_all(b"\x1e")?;
        serde_json::to_writer(&mut self.out, v)?;
        self.out.write_all(b"\n")
    }
}

/// The qlog event name of a row.
fn name(r: &Row<'_>) -> &'static str {
    match r.kind {
        Kind::Send | Kind::Retransmit => "transport:packet_sent",
        Kind::Arrive => "transport:packet_received",
        Kind::Drop => "transport:packet_dropped",
        Kind::Deliver => "transport:data_moved",
        Kind::Timeout => "recovery:loss_timer_updated",
    }
}

/// The event's `data`: the path, the packet (header, frames, length) and cmtlab's
/// own fields.
fn data(r: &Row<'_>) -> Value {
    let mut d = json!({ "path_id": r.path });
    let side = match r.side {
        Side::Sender => "sender",
        Side::Receiver => "receiver",
        Side::Network => "network",
    };
    let mut own = json!({ "side": side, "path_name": r.path_name });
    if !r.cause.is_empty() {
        own["cause"] = json!(r.cause);
    }
    if !r.link.is_empty() {
        own["link"] = json!(r.link);
    }
    match r.kind {
        Kind::Timeout => {
            d["event_type"] = json!("expired");
            d["timer_type"] = json!("pto");
        }
        Kind::Deliver => {
            d["from"] = json!("transport");
            d["to"] = json!("application");
            d["length"] = json!(r.bytes);
            own["tsn"] = json!(r.tsn);
        }
        _ if r.ack => {
            d["header"] = json!({ "packet_type": "1RTT" });
            d["frames"] = json!([{ "frame_type": "ack", "cumulative_tsn": r.tsn }]);
        }
        _ => {
            d["header"] = json!({ "packet_type": "1RTT", "packet_number": r.tsn });
            d["frames"] = json!([{ "frame_type": "stream", "stream_id": 0, "length": r.bytes }]);
            d["raw"] = json!({ "payload_length": r.bytes });
            if r.kind == Kind::Retransmit {
                d["trigger"] = json!(match r.cause {
                    "timeout" => "retransmit_timeout",
                    _ => "retransmit_reordered",
                });
            }
        }
    }
    d["cmtlab"] = own;
    d
}

impl<W: io::Write + Send> Sink for QlogSink<W> {
    fn row(&mut self, r: &Row<'_>) -> io::Result<()> {
        let time = r.time.as_nanos() as f64 / 1e6;
        if r.side == Side::Sender {
            if self.cwnd.len() <= r.path {
                self.cwnd.resize(r.path + 1, None);
            }
            if r.cwnd.is_some() && self.cwnd[r.path] != r.cwnd {
                self.cwnd[r.path] = r.cwnd;
                self.record(&json!({
                    "time": time,
                    "name": "recovery:metrics_updated",
                    "data": { "path_id": r.path, "congestion_window": r.cwnd },
                }))?;
            }
        }
        self.record(&json!({ "time": time, "name": name(r), "data": data(r) }))
    }

    fn finish(mut self: Box<Self>) -> io::Result<()> {
        self.out.flush()
    }
}
