//! The flags every transfer takes (`send`, `recv`, `recv --dir`): algorithms, buffer,
//! timers, outputs, authentication, resumption — and the runtime options they make.

use std::path::Path;

use cmt_net::transfer::{Options, Outputs};

/// Algorithm and buffer flags shared by `send` and `recv`.
#[derive(clap::Args, Clone, Debug)]
pub struct AlgArgs {
    /// What a deployed stack runs, all at once: `linux-mptcp` is upstream Linux MPTCP's
    /// scheduler, each subflow resending its own data, CUBIC as Linux runs it and
    /// RACK-TLP loss detection (with the default `--rto-min`, Linux's 0.2 s) and its
    /// reinjection of a stalled subflow's data on another, with Proportional Rate
    /// Reduction of each window cut and its connection-level send buffer; `picoquic-rr`
    /// is picoquic's
    /// path selection, lost data sent on whichever path sends next, New Reno and QUIC's
    /// loss recovery with its per-path probe timeouts. Not with `--scheduler`, `--rtx`,
    /// `--cc`, `--recovery`, `--reinject`, `--send-buffer` or `--prr`.
    #[arg(long, value_name = "linux-mptcp|picoquic-rr",
          value_parser = ["linux-mptcp", "picoquic-rr"],
          conflicts_with_all = ["scheduler", "rtx", "cc", "recovery", "reinject", "send_buffer", "prr"])]
    pub(crate) preset: Option<String>,
    /// Scheduler (as in scenario files).
    #[arg(long, default_value = "round-robin")]
    pub(crate) scheduler: String,
    /// Retransmission policy.
    #[arg(long, default_value = "rtx-cwnd")]
    pub(crate) rtx: String,
    /// Congestion control.
    #[arg(long, default_value = "reno")]
    pub(crate) cc: String,
    /// Loss detection: `sctp` (RFC 9260's missing reports and T3-rtx), `rack-tlp` (RFC
    /// 8985 per path, as Linux runs it per MPTCP subflow) or `quic` (RFC 9002 per path,
    /// as multipath QUIC runs it: packet and time thresholds, probe timeouts).
    #[arg(long, default_value = "sctp", value_name = "sctp|rack-tlp|quic")]
    recovery: cmt_core::Recovery,
    /// Reinjection: `off`, or `linux` (upstream Linux MPTCP's: the oldest unacknowledged
    /// data sent again on an idle path when the association's retransmission timer
    /// fires, and a path silent for over four of its periods marked stale and its data
    /// copied to another).
    #[arg(long, default_value = "off", value_name = "off|linux")]
    reinject: cmt_core::Reinject,
    /// The sender's own buffer: `off` (only the receiver's window bounds what is
    /// outstanding) or `linux` (Linux MPTCP's connection-level send buffer: data sent
    /// and not cumulatively acknowledged stays within the sum of the paths' buffers,
    /// each twice its largest window in kernel memory).
    #[arg(long, default_value = "off", value_name = "off|linux")]
    send_buffer: cmt_core::SendBuffer,
    /// Proportional Rate Reduction (RFC 9937, as Linux runs it): a path's window cut
    /// for a loss comes down over the next round trip, each ack letting out a share of
    /// what it delivered, instead of at once. Not with `--recovery quic`.
    #[arg(long)]
    prr: bool,
    /// Receive buffer: bytes, or a size with its unit as in scenario files ("4MB",
    /// "256KB"; binary prefixes).
    #[arg(long, default_value = "4MB", value_parser = parse_rbuf)]
    pub(crate) rbuf: u32,
    /// Give up after this many seconds.
    #[arg(long, default_value_t = 600.0)]
    timeout: f64,
    /// Give up on the peer only when nothing has come from it, on any path, for this
    /// many seconds; meanwhile every silent path is retried at least every half second
    /// (and at once when its link comes back), so data flows again within about half a
    /// second of a path's return.
    #[arg(long, default_value_t = 300.0, value_name = "SECONDS")]
    outage_tolerance: f64,
    /// The shortest retransmission timeout, in seconds (Linux TCP's 0.2 by default;
    /// RFC 9260 says 1).
    #[arg(long, default_value_t = 0.2, value_name = "SECONDS")]
    rto_min: f64,
    /// Path MTU in bytes, IPv4 and UDP headers included (loopback allows 65535).
    #[arg(long, default_value_t = 1500)]
    mtu: u32,
    /// Ask for receiver-driven rate control (both ends must ask; otherwise standard
    /// CMT, and `--cc receiver` falls back to reno).
    #[arg(long)]
    receiver_rates: bool,
    /// Offer explicit congestion notification (RFC 3168): used when the peer offers it
    /// too; data then leaves ECN-capable and a queue's Congestion Experienced mark cuts
    /// the path's window without a loss.
    #[arg(long)]
    ecn: bool,
    /// Write every datagram sent and received to this pcap file (SCTP over UDP).
    #[arg(long, value_name = "FILE")]
    pcap: Option<std::path::PathBuf>,
    /// Write a per-packet trace of this end to this file (CSV; Parquet for a
    /// `.parquet` name, qlog JSON-SEQ for `.qlog`/`.sqlog`; columns in docs/metrics.md).
    #[arg(long, value_name = "FILE")]
    pub(crate) trace: Option<std::path::PathBuf>,
    /// Write the final summary as JSON (the keys of the simulator's summary.json that
    /// apply to a real run).
    #[arg(long, value_name = "FILE")]
    pub(crate) summary: Option<std::path::PathBuf>,
    /// Print the final report as one JSON object (the `--summary` keys) on standard
    /// output instead of text.
    #[arg(long)]
    pub(crate) json: bool,
    /// Authenticate every chunk that can change the association's state (DATA, SACK,
    /// HEARTBEAT, SHUTDOWN, ABORT, the file digests, …) with SCTP-AUTH (RFC 4895,
    /// HMAC-SHA-256) under the key in FILE (its bytes verbatim, 1–4096 of them); both
    /// ends give the same file, and a peer without SCTP-AUTH is refused. Without it, a
    /// party on the path that saw the handshake can forge a SHUTDOWN that commits a
    /// truncated file, and add or delete the association's addresses (ASCONF), drawing
    /// data to an address of its own; use it wherever the path is not yours.
    #[arg(long, value_name = "FILE")]
    key: Option<std::path::PathBuf>,
    /// Transfer with an SCTP peer that cannot confirm the file (not cmtlab: usrsctp, a
    /// kernel): the receiver then stores what the sender's SHUTDOWN closes without a
    /// digest to compare, the sender ends without the receiver's confirmation.
    #[arg(long)]
    allow_unconfirmed: bool,
    /// Continue an interrupted transfer. `recv --resume` keeps what it received when a
    /// transfer does not complete (`.NAME.part`, `.NAME.resume` beside --out) and offers
    /// it next time; `send --resume` then sends only the rest, once its file is found to
    /// start with what the receiver holds (a changed file is refused).
    #[arg(long)]
    resume: bool,
    /// Send consecutive datagrams for one path in one system call (UDP GSO): `auto`
    /// (towards loopback addresses only: measured to cost goodput on rate-limited
    /// paths), `on` or `off`.
    #[arg(long, default_value = "auto", value_name = "auto|on|off")]
    gso: cmt_net::io::Gso,
}

/// The algorithms a transfer runs.
pub(crate) struct Algorithms {
    pub(crate) scheduler: String,
    pub(crate) rtx: String,
    pub(crate) cc: String,
    pub(crate) recovery: cmt_core::Recovery,
    pub(crate) reinject: cmt_core::Reinject,
    pub(crate) send_buffer: cmt_core::SendBuffer,
    pub(crate) prr: bool,
}

impl AlgArgs {
    /// The scheduler, retransmission policy, congestion control, loss detection and
    /// reinjection in force: the preset's, or the flags'.
    pub(crate) fn algorithms(&self) -> Algorithms {
        match self.preset.as_deref() {
            Some("picoquic-rr") => Algorithms {
                scheduler: "picoquic-rr".into(),
                rtx: "rtx-asap".into(),
                cc: "reno".into(),
                recovery: cmt_core::Recovery::Quic,
                reinject: cmt_core::Reinject::Off,
                send_buffer: cmt_core::SendBuffer::Off,
                prr: false,
            },
            Some(_linux_mptcp) => Algorithms {
                scheduler: "linux-mptcp".into(),
                rtx: "rtx-same".into(),
                cc: "linux-cubic".into(),
                recovery: cmt_core::Recovery::RackTlp,
                reinject: cmt_core::Reinject::Linux,
                send_buffer: cmt_core::SendBuffer::Linux,
                prr: true,
            },
            None => Algorithms {
                scheduler: self.scheduler.clone(),
                rtx: self.rtx.clone(),
                cc: self.cc.clone(),
                recovery: self.recovery,
                reinject: self.reinject,
                send_buffer: self.send_buffer,
                prr: self.prr,
            },
        }
    }
}

/// The longest key accepted from `--key` (RFC 4895 sets no limit; HMAC hashes a key
/// longer than its block first, so more bytes add nothing but cost).
const MAX_KEY: usize = 4096;

/// `--rbuf`: bytes, or a size with its unit as scenario files take it ("4MB").
fn parse_rbuf(text: &str) -> Result<u32, String> {
    let raw = match text.trim().parse::<f64>() {
        Ok(x) => cmt_sim::units::Raw::Num(x),
        Err(_) => cmt_sim::units::Raw::Text(text.to_string()),
    };
    let bytes = cmt_sim::units::parse_size(&raw)?;
    u32::try_from(bytes)
        .ok()
        .filter(|b| *b > 0)
        .ok_or_else(|| format!("{text}: must be between 1 byte and 4 GiB − 1"))
}

fn read_key(p: &Path) -> Result<Vec<u8>, String> {
    let key = std::fs::read(p).map_err(|e| format!("--key {}: {e}", p.display()))?;
    if key.is_empty() {
        return Err(format!("--key {}: the file is empty", p.display()));
    }
    if key.len() > MAX_KEY {
        return Err(format!(
            "--key {}: {} bytes; a key has at most {MAX_KEY}",
            p.display(),
            key.len()
        ));
    }
    Ok(key)
}

pub(crate) fn options(a: &AlgArgs) -> Result<Options, String> {
    let auth = match &a.key {
        Some(p) => Some(cmt_core::auth::AuthConfig::with_key(read_key(p)?)),
        None => None,
    };
    let algs = a.algorithms();
    if algs.prr && algs.recovery == cmt_core::Recovery::Quic {
        return Err("--prr: not with --recovery quic (RFC 9002 cuts the window at once)".into());
    }
    Ok(Options {
        preset: a.preset.clone(),
        scheduler: algs.scheduler,
        rtx: algs.rtx,
        cc: algs.cc,
        recovery: algs.recovery,
        reinject: algs.reinject,
        send_buffer: algs.send_buffer,
        prr: algs.prr,
        rbuf: a.rbuf,
        timeout_s: a.timeout,
        outage_tolerance_s: a.outage_tolerance,
        rto_min_s: a.rto_min,
        mtu: a.mtu,
        receiver_rates: a.receiver_rates,
        ecn: a.ecn,
        outputs: Outputs {
            pcap: a.pcap.clone(),
            trace: a.trace.clone(),
            progress: std::io::IsTerminal::is_terminal(&std::io::stderr())
                .then_some(crate::progress::show as fn(u64, &[_])),
        },
        auth,
        allow_unconfirmed: a.allow_unconfirmed,
        resume: a.resume,
        gso: a.gso,
        ..Options::default()
    })
}
