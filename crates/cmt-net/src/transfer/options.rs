//! The options of a transfer, checked before any packet is sent.

use std::net::{IpAddr, SocketAddr};

use cmt_core::cc;
use cmt_core::params::Params;
use cmt_core::rtx;
use cmt_core::sched;
use cmt_core::{Config, Time};

use super::report::PathCount;

/// The options of a transfer: what both ends of the association run (its algorithms,
/// buffer, timers and protocol extensions) in its own fields, and by role what only a
/// sender uses ([`send`](Self::send)), what only a receiver uses
/// ([`receive`](Self::receive)) and what a transfer writes besides the data
/// ([`outputs`](Self::outputs)).
#[derive(Clone, Debug)]
pub struct Options {
    /// A deployed stack's settings besides its algorithms (`linux-mptcp`,
    /// `picoquic-rr`: its timers, initial window, burst limit, delayed-ack time;
    /// [`cmt_core::preset::apply`]), all but RTO.Min, which stays `rto_min_s`.
    pub preset: Option<String>,
    /// A simulated scenario's protocol settings to run exactly (`replay`): its
    /// configuration and its algorithms' parameters replace every setting above but the
    /// algorithm names, MTU, receive buffer and the runtime's own needs.
    pub exact: Option<Box<Exact>>,
    /// Scheduler name (as in scenario files).
    pub scheduler: String,
    /// Retransmission policy name.
    pub rtx: String,
    /// Congestion control name.
    pub cc: String,
    /// Receive buffer, bytes.
    pub rbuf: u32,
    /// Path MTU including IPv4 + UDP headers.
    pub mtu: u32,
    /// Give up after this long (seconds).
    pub timeout_s: f64,
    /// Ask for receiver-driven rate control (docs/algorithms.md §2–3). Both ends must ask: each
    /// announces the round-info and rate-advert chunk types in its INIT / INIT ACK
    /// (Supported Extensions, RFC 5061 §4.2.7) only when asked, and the mode is on only
    /// when both announced them. Otherwise the association runs standard SCTP CMT and
    /// the `receiver` congestion control falls back to `reno`.
    pub receiver_rates: bool,
    /// Explicit congestion notification (RFC 3168; RFC 9260 Appendix A): offered in the
    /// INIT exchange, used when the peer offers it too. DATA then leaves ECT(0), a
    /// Congestion Experienced mark read from the socket is echoed, and a path whose
    /// packets are marked cuts its window without a loss.
    pub ecn: bool,
    /// How the sender detects loss: RFC 9260's missing reports, or RACK-TLP per path as
    /// Linux runs it per MPTCP subflow (RFC 8985; docs/algorithms.md §1.12).
    pub recovery: cmt_core::Recovery,
    /// Whether a stalled path's data is also sent on another: upstream Linux MPTCP's
    /// reinjection, or none (docs/algorithms.md §1.13).
    pub reinject: cmt_core::Reinject,
    /// The sender's own bound on data outstanding: none, or Linux MPTCP's
    /// connection-level send buffer (docs/algorithms.md §1.16).
    pub send_buffer: cmt_core::SendBuffer,
    /// Proportional Rate Reduction of each window cut (RFC 9937, as Linux runs it;
    /// docs/algorithms.md §1.15).
    pub prr: bool,
    /// Outage tolerance (seconds): either end gives up on an established association
    /// only when nothing has come from the peer, on any path, for this long (or the
    /// peer aborts) — however many paths there are. Meanwhile every path that stopped
    /// answering is tried at least every `max(1 s, rto_min)`, so data flows again about
    /// a second after the first path returns (docs/algorithms.md §1.7, D31). Default 300 s.
    pub outage_tolerance_s: f64,
    /// RTO.Min (seconds): the shortest retransmission timeout. The default, 0.2 s, is
    /// Linux TCP's; RFC 9260's 1 s makes every loss that needs a timeout stall the
    /// stream for a second or more.
    pub rto_min_s: f64,
    /// The interface local socket i's address was named by (`send --local wlan0`: path
    /// i's; `recv --listen wlan0:9899`: listening address i's), if it was. Such sockets
    /// follow their interface ([`crate::ifwatch`]): their paths are removed the moment
    /// it loses its address, and bound to its new address and verified when it gets
    /// one, the peer told of both (docs/algorithms.md §1.9, §1.10).
    pub interfaces: Vec<Option<String>>,
    /// RFC 4895 authentication with a pre-shared endpoint key (`--key FILE`): every
    /// chunk that can change the association's state must then carry an AUTH chunk
    /// ([`cmt_core::auth::CHANGES_STATE`]), and a peer that does not support it is
    /// refused. Both ends must hold the same key.
    pub auth: Option<cmt_core::auth::AuthConfig>,
    /// Dynamic address reconfiguration (RFC 5061): announce ASCONF, tell the peer of our
    /// address changes and follow its own (docs/algorithms.md §1.10). Used only when the
    /// peer announces it and authenticates it (RFC 4895 — with `auth`'s key, or without
    /// a key with an empty one for ASCONF alone). On by default.
    pub reconfigure: bool,
    /// Transfer with a peer that does not confirm files (an SCTP stack other than
    /// cmtlab, which lacks the FILE-DIGEST exchange): the receiver then commits on the
    /// sender's SHUTDOWN without a digest to compare, and the sender succeeds without
    /// the receiver's confirmation. Off by default: such a peer is refused right after
    /// the handshake.
    pub allow_unconfirmed: bool,
    /// Continue an interrupted transfer ([`crate::resume`]). A receiver keeps what it
    /// received when a transfer does not complete and offers it next time; a sender
    /// sends only what the receiver's offer lacks, after checking that its file still
    /// starts with what the receiver holds (otherwise it refuses: the source changed).
    pub resume: bool,
    /// When consecutive datagrams for one path leave in one GSO send
    /// ([`crate::io::Gso`]; default: towards loopback addresses only).
    pub gso: crate::io::Gso,
    /// What only a sender uses.
    pub send: SendOptions,
    /// What only a receiver uses.
    pub receive: ReceiveOptions,
    /// What a transfer writes besides the data, and its progress reports.
    pub outputs: Outputs,
    /// When notified (e.g. on Ctrl-C), abort: an established association sends an ABORT
    /// (RFC 9260 §9.1) so the peer stops at once instead of timing out, and the transfer
    /// returns an error. (A serving receiver stops on its own signal,
    /// [`Serve::stop`](super::serve::Serve::stop), and gives each association its abort.)
    pub abort: Option<std::sync::Arc<tokio::sync::Notify>>,
    /// Set by a serving receiver for each association it runs: the association counts
    /// what it stores there and reads why the server sheds it ([`super::meter`]).
    pub meter: Option<std::sync::Arc<super::meter::Meter>>,
}

/// What only a sender uses.
#[derive(Clone, Debug, Default)]
pub struct SendOptions {
    /// Capacity of path i in bytes/s when the operator knows it (the sender then gives it
    /// to the scheduler as the simulator does, e.g. for JAPS's `bandwidth = "oracle"`);
    /// empty: unknown.
    pub capacities: Vec<Option<f64>>,
    /// Path i is a backup path when `backups[i]` (missing: regular). A backup
    /// path carries data only while no regular path is ACTIVE (docs/algorithms.md §1.8);
    /// heartbeats probe it meanwhile.
    pub backups: Vec<bool>,
    /// With `--local auto`: adopt interfaces that appear during the transfer — any
    /// that `--local auto` would have taken, but those named here — each on one of
    /// [`ADOPT_SLOTS`](crate::transfer::ADOPT_SLOTS) spare sockets, as a new path (told to the
    /// receiver with ADD-IP, verified before it carries data). `None`: no adoption.
    pub adopt: Option<Vec<String>>,
    /// The name the data is stored under by a receiver serving a directory
    /// (`recv --dir`), carried in the stream's header; [`send_file`](crate::transfer::send_file)
    /// gives the file's own name when this is `None`. A receiver writing to a file it
    /// was given ignores it.
    pub name: Option<String>,
    /// Ask the receiver to return when and where each DATA packet arrived (the
    /// ARRIVALS chunk type, which every cmtlab receiver announces):
    /// [`Report::arrivals`](crate::transfer::Report::arrivals) then holds them, for a
    /// calibration from this end alone.
    pub return_arrivals: bool,
}

/// What only a receiver uses.
#[derive(Clone, Debug, Default)]
pub struct ReceiveOptions {
    /// Only INITs from these addresses start an association (empty: anyone);
    /// others get no answer.
    pub peers: Vec<IpAddr>,
}

/// What a transfer writes besides the data, and its progress reports.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    /// Write every datagram sent and received to this pcap file.
    pub pcap: Option<std::path::PathBuf>,
    /// Write a per-packet trace of this end to this file (CSV, or Parquet for a
    /// `.parquet` name; the simulator's columns, [`cmt_sim::packet_trace`]).
    pub trace: Option<std::path::PathBuf>,
    /// Called about every 250 ms with the bytes done so far and the per-path counters.
    pub progress: Option<fn(u64, &[PathCount])>,
}

impl Options {
    /// Checks every option before a packet is sent (so a mistake never leaves a peer
    /// waiting on a half-built association); the error names the option.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_for(crate::IPV4_UDP_OVERHEAD)
    }

    /// [`validate`](Self::validate) for paths whose IP + UDP headers take `overhead`
    /// bytes (48 over IPv6).
    pub(super) fn validate_for(&self, overhead: u32) -> Result<(), String> {
        if !self.timeout_s.is_finite() || self.timeout_s <= 0.0 {
            return Err(format!(
                "timeout {}: give a positive, finite number of seconds",
                self.timeout_s
            ));
        }
        if !self.outage_tolerance_s.is_finite() || !(1.0..=1e6).contains(&self.outage_tolerance_s) {
            return Err(format!(
                "outage tolerance {}: give 1 to 1000000 seconds",
                self.outage_tolerance_s
            ));
        }
        if !self.rto_min_s.is_finite() || !(0.001..=60.0).contains(&self.rto_min_s) {
            return Err(format!(
                "rto-min {}: give 0.001 to 60 seconds",
                self.rto_min_s
            ));
        }
        if self.auth.as_ref().is_some_and(|a| a.key.is_empty()) {
            return Err("key: the key is empty (give at least one byte)".into());
        }
        let p = Params::default();
        sched::by_name(&self.scheduler, &p).map_err(|e| format!("scheduler: {}", e.0))?;
        rtx::by_name(&self.rtx, &p).map_err(|e| format!("rtx: {}", e.0))?;
        cc::by_name(&self.cc, &p).map_err(|e| format!("cc: {}", e.0))?;
        let cfg = Config {
            mtu: self.mtu,
            // Room for an AUTH chunk (the largest: HMAC-SHA-256) in every packet.
            ip_header_len: overhead + self.auth.as_ref().map_or(0, |_| AUTH_CHUNK_MAX),
            rbuf: self.rbuf,
            ..Config::default()
        };
        cfg.validate()
    }

    /// The outage handling and RTO.Min of the association (see
    /// [`outage_tolerance_s`](Self::outage_tolerance_s)).
    pub(super) fn timers(&self) -> (cmt_core::config::Outage, cmt_core::Duration) {
        let rto_min = cmt_core::Duration::from_nanos((self.rto_min_s * 1e9) as u64);
        let outage = cmt_core::config::Outage {
            tolerance: cmt_core::Duration::from_nanos((self.outage_tolerance_s * 1e9) as u64),
            probe_interval: rto_min.max(cmt_core::Duration::from_millis(500)),
        };
        (outage, rto_min)
    }

    /// The whole-transfer time limit, from `from`.
    pub(super) fn deadline(&self, from: Time) -> Time {
        Time::from_nanos(
            from.as_nanos()
                .saturating_add((self.timeout_s * 1e9) as u64),
        )
    }
}

/// The largest AUTH chunk (HMAC-SHA-256: 8 + 32 bytes).
pub(super) const AUTH_CHUNK_MAX: u32 = 40;

/// IP + UDP header bytes of the largest kind among `addrs`: 48 if any is IPv6, else 28.
/// One value per association: chunk sizes are the same on every path.
pub(super) fn overhead_of(addrs: &[SocketAddr]) -> u32 {
    if addrs.iter().any(|a| a.is_ipv6()) {
        crate::IPV6_UDP_OVERHEAD
    } else {
        crate::IPV4_UDP_OVERHEAD
    }
}

/// A simulated scenario's protocol settings, for a real run of the scenario (the
/// runtime's `replay`): the association runs this configuration and builds its
/// algorithms with these parameters. Only what a real path needs is the runtime's: the
/// MTU and per-packet overhead of UDP, path confirmation, receiver-driven rate control
/// as the peers negotiate it, the immediate SACK its close waits for.
#[derive(Clone, Debug)]
pub struct Exact {
    /// The scenario's configuration.
    pub config: Config,
    /// Its algorithms' parameters.
    pub params: cmt_sim::AlgorithmParams,
}

/// Round-robin with `rtx-cwnd` and Reno, a 4 MiB receive buffer, MTU 1500, RTO.Min
/// 0.2 s, an outage tolerance of 300 s, a 600 s time limit, reconfiguration on, no
/// outputs.
impl Default for Options {
    fn default() -> Self {
        Options {
            exact: None,
            scheduler: "round-robin".into(),
            rtx: "rtx-cwnd".into(),
            cc: "reno".into(),
            rbuf: 4 << 20,
            mtu: 1500,
            timeout_s: 600.0,
            receiver_rates: false,
            ecn: false,
            recovery: cmt_core::Recovery::Sctp,
            preset: None,
            reinject: cmt_core::Reinject::Off,
            send_buffer: cmt_core::SendBuffer::Off,
            prr: false,
            outage_tolerance_s: 300.0,
            rto_min_s: 0.2,
            interfaces: Vec::new(),
            auth: None,
            reconfigure: true,
            allow_unconfirmed: false,
            resume: false,
            gso: crate::io::Gso::default(),
            send: SendOptions::default(),
            receive: ReceiveOptions::default(),
            outputs: Outputs::default(),
            abort: None,
            meter: None,
        }
    }
}
