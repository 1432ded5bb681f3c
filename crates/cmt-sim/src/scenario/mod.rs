//! Scenario files (TOML): the network, the algorithms, the workload and the seed.
//!
//! Every table rejects unknown fields; quantities are validated when the scenario is
//! built, with errors that name the file, the field and the problem. The key reference
//! lives in `docs/scenario.md` of the repository.

mod build;
mod events;
mod limits;
mod links;
mod load;
mod queues;
mod traffic;

pub use build::{AlgorithmParams, Built, BuiltPath, Workload};
pub use events::BuiltEvent;
pub use links::{BuiltLink, LossDirection};
pub use load::{load_file, load_str, load_str_in, ScenarioError};
pub use traffic::BuiltTraffic;

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::units::Raw;

/// A whole scenario as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Free-form name (defaults to the file stem).
    #[serde(default)]
    pub name: Option<String>,
    /// Seed of every random stream. Required: a scenario without a seed is an error.
    pub seed: u64,
    /// Simulated time for a backlogged (bulk) transfer, e.g. "120s".
    #[serde(default)]
    pub duration: Option<Raw>,
    /// Bytes to transfer instead (FTT run), e.g. "10MB".
    #[serde(default)]
    pub file_size: Option<Raw>,
    /// Upper bound of simulated time for a file transfer (default "3600s").
    #[serde(default)]
    pub time_limit: Option<Raw>,
    /// Algorithms and protocol parameters.
    #[serde(default)]
    pub association: AssociationSpec,
    /// Receiver parameters.
    #[serde(default)]
    pub receiver: ReceiverSpec,
    /// What is measured.
    #[serde(default)]
    pub metrics: MetricsSpec,
    /// Links (each declared link exists in both directions).
    pub links: Vec<LinkSpec>,
    /// Paths, as chains of links.
    pub paths: Vec<PathSpec>,
    /// Scheduled link changes.
    #[serde(default)]
    pub events: Vec<EventSpec>,
    /// Background traffic sources.
    #[serde(default)]
    pub traffic: Vec<TrafficSpec>,
}

/// `[[traffic]]`: background traffic along a chain of links — open-loop sources,
/// TCP-like flows, and further multipath associations (`kind = "cmt"`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficSpec {
    /// Name in results.
    pub name: String,
    /// "cbr", "poisson", "pareto", "vbr", "tcp", "cmt", "web" or "video".
    pub kind: String,
    /// Links crossed, in order (every kind but "cmt").
    #[serde(default)]
    pub links: Vec<String>,
    /// A "cmt" flow: its paths, each the links it crosses in order.
    #[serde(default)]
    pub paths: Vec<Vec<String>>,
    /// A "cmt" flow: its scheduler (default "round-robin").
    #[serde(default)]
    pub scheduler: Option<String>,
    /// A "web" flow: the mean object size (default "50KB"); `shape` is the Pareto tail
    /// index of the sizes (default 1.2; `inf`: every object the mean size) and `idle` the
    /// mean think time (default "1s").
    #[serde(default)]
    pub object: Option<Raw>,
    /// A "video" flow: segment duration (default "4s").
    #[serde(default)]
    pub segment: Option<Raw>,
    /// A "video" flow: the encoding rates (default 0.4, 0.75, 1.5, 3, 4.5 and 7.5 Mbit/s).
    #[serde(default)]
    pub bitrates: Vec<Raw>,
    /// A "video" flow: seconds of video the player buffers ahead (default "30s").
    #[serde(default)]
    pub buffer: Option<Raw>,
    /// A "video" flow: share of the estimated download rate an encoding may use
    /// (default 0.85).
    #[serde(default)]
    pub safety: Option<f64>,
    /// "forward" (default, the direction paths send data) or "reverse".
    #[serde(default)]
    pub direction: Option<String>,
    /// Mean offered rate, e.g. "1Mbps" (or use `load`).
    #[serde(default)]
    pub rate: Option<Raw>,
    /// Mean offered load as a fraction of the first link's rate, fixed or a range drawn
    /// once per run ("0%..50%").
    #[serde(default)]
    pub load: Option<Raw>,
    /// Packet size in bytes, or "mix" (50 % 44 B, 25 % 576 B, 25 % 1500 B); for a TCP
    /// flow, the size of its full packets on the wire (default 1500).
    #[serde(default)]
    pub size: Option<Raw>,
    /// VBR: smallest and largest packet (default 100 and 200 bytes).
    #[serde(default)]
    pub min_size: Option<u32>,
    /// See `min_size`.
    #[serde(default)]
    pub max_size: Option<u32>,
    /// Start time (default 0).
    #[serde(default)]
    pub start: Option<Raw>,
    /// Stop time (default: never).
    #[serde(default)]
    pub stop: Option<Raw>,
    /// Pareto: mean burst duration (default "500ms").
    #[serde(default)]
    pub burst: Option<Raw>,
    /// Pareto: mean idle duration (default "500ms").
    #[serde(default)]
    pub idle: Option<Raw>,
    /// Pareto shape (default 1.5).
    #[serde(default)]
    pub shape: Option<f64>,
    /// VBR: rate redraw interval (default "200ms").
    #[serde(default)]
    pub interval: Option<Raw>,
    /// Independent copies, each offering 1/count of the rate (default 1).
    #[serde(default)]
    pub count: Option<u32>,
    /// TCP flows: the receive window that bounds the flow's flight, in full packets (a
    /// bare number, as ns-2's `window_`) or bytes ("64KB"); default "4MiB": backlogged
    /// and never window-limited.
    #[serde(default)]
    pub window: Option<Raw>,
    /// TCP flows: acknowledge every `ack_every` packets (default 2, RFC 9260's delayed
    /// SACK; ns-2's `TCPSink` acknowledges every packet: 1).
    #[serde(default)]
    pub ack_every: Option<u32>,
    /// Closed-loop flows: ECN-capable transport (default false), as `association.ecn`.
    #[serde(default)]
    pub ecn: Option<bool>,
    /// TCP flows: congestion control, "reno" (default), "cubic" (RFC 9438) or
    /// "linux-cubic" (as Linux's tcp_cubic.c); a "cmt" flow also "lia", "olia",
    /// "balia" and the other controls of the core that need no receiver rates.
    #[serde(default)]
    pub cc: Option<String>,
}

/// `[[events]]`: at time `at`, change link `link` (both directions unless `direction`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventSpec {
    /// When, e.g. "30s".
    pub at: Raw,
    /// Link name (a link event).
    #[serde(default)]
    pub link: Option<String>,
    /// Path name (a path event: its address `"added"` or `"removed"`, as `state`).
    #[serde(default)]
    pub path: Option<String>,
    /// "both" (default), "forward" or "reverse".
    #[serde(default)]
    pub direction: Option<String>,
    /// "down" or "up".
    #[serde(default)]
    pub state: Option<String>,
    /// New rate.
    #[serde(default)]
    pub rate: Option<Raw>,
    /// New propagation delay.
    #[serde(default)]
    pub delay: Option<Raw>,
    /// New Bernoulli loss probability.
    #[serde(default)]
    pub loss: Option<Raw>,
    /// A flapping link: down and up, again and again, from `at` until `flap.until`.
    #[serde(default)]
    pub flap: Option<FlapSpec>,
}

/// `flap = { down = "1.5s", up = "1.5s", until = "60s" }` of an event.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlapSpec {
    /// How long each down lasts.
    pub down: Raw,
    /// How long each up lasts.
    pub up: Raw,
    /// When the flapping stops (the link is up from then on).
    pub until: Raw,
}

/// Algorithm parameters: a TOML table of numbers, booleans and strings.
pub type ParamTable = BTreeMap<String, toml::Value>;

/// `[association]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AssociationSpec {
    /// A named set of algorithms: "db-cmt" = db-cmt scheduler + rtx-cl + db-cmt
    /// congestion control (DB-CMT 2022); "a-cmt" = db-cmt scheduler + rtx-cwnd + a-cmt; "cmt-qa" =
    /// cmt-qa scheduler + rtx-cwnd + cmt-qa loss differentiation. Explicit
    /// `scheduler`, `rtx`, `cc` still win.
    pub preset: Option<String>,
    /// Scheduler name (default "round-robin").
    pub scheduler: Option<String>,
    /// Scheduler parameters.
    #[serde(default)]
    pub scheduler_params: ParamTable,
    /// Retransmission policy (default "rtx-cwnd").
    pub rtx: Option<String>,
    /// Retransmission policy parameters.
    #[serde(default)]
    pub rtx_params: ParamTable,
    /// Congestion control (default "reno").
    pub cc: Option<String>,
    /// Congestion control parameters.
    #[serde(default)]
    pub cc_params: ParamTable,
    /// Receiver-driven CMT (docs/algorithms.md §2–3): round info on DATA, receiver rate adverts
    /// (default off; the `cmt-rev` and `mptcp-rec` presets turn it on).
    pub receiver_rates: Option<bool>,
    /// Receiver estimator settings: `rtt_literal`, `sample_literal` (booleans), `phi`,
    /// `theta`, `tolerance` (numbers).
    #[serde(default)]
    pub receiver_params: ParamTable,
    /// "rfc" (default) or "ns2": follow ns-2.35's SCTP CMT module where it differs from
    /// RFC 9260 (window arithmetic, Max.Burst, ssthresh floor, initial ssthresh).
    pub compat: Option<String>,
    /// Path MTU in bytes including the IP header (default 1500).
    pub mtu: Option<u32>,
    /// Header bytes below SCTP (default 20, IPv4).
    pub ip_header: Option<u32>,
    /// CMT switches (default true).
    pub sfr: Option<bool>,
    /// CMT Cwnd Update for CMT.
    pub cuc: Option<bool>,
    /// CMT Delayed Ack for CMT.
    pub dac: Option<bool>,
    /// Missing reports for fast retransmit (default 3).
    pub dupthresh: Option<u32>,
    /// Max.Burst (default 4; 0 = off).
    pub max_burst: Option<u32>,
    /// When Max.Burst applies: "rfc" (every opportunity, default) or "ns2".
    pub max_burst_mode: Option<String>,
    /// The loss rate the loss-aware algorithms use: "estimated" (EWMA, default) or
    /// "oracle" (each path's configured loss, as ns-2's `set-destination-lossrate`).
    pub loss_rate: Option<String>,
    /// CMT-PF on/off (default off: the RTX_CSI and DB-CMT papers' "CMT" baseline).
    pub pf: Option<bool>,
    /// PF threshold (default 0).
    pub pfmr: Option<u32>,
    /// cwnd after PF recovery, MTUs (default 2).
    pub pf_cwnd_mtus: Option<u32>,
    /// Path confirmation: paths after the first carry data only once a HEARTBEAT on
    /// them is answered (default false; the runtime always confirms).
    pub confirm_paths: Option<bool>,
    /// Explicit congestion notification (default false): DATA goes out ECN-capable and a
    /// queue's Congestion Experienced mark cuts the path's window, without a loss.
    pub ecn: Option<bool>,
    /// Loss detection (default "sctp": RFC 9260's missing reports; "rack-tlp": RFC
    /// 8985's per path).
    pub recovery: Option<String>,
    /// Reinjection (default "off"; "linux": upstream Linux MPTCP's, data held up on one
    /// path sent again on an idle or healthy other).
    pub reinject: Option<String>,
    /// The sender's own buffer (default "off": only the peer's window bounds what is
    /// outstanding; "linux": Linux MPTCP's autotuned connection-level send buffer).
    pub send_buffer: Option<String>,
    /// Proportional Rate Reduction of each window cut (default false; RFC 9937).
    pub prr: Option<bool>,
    /// The receiver SACKs at once, despite DAC, a chunk that fills the hole at the front
    /// of the sequence, as TCP acks a segment that fills a gap (default false; the
    /// `linux-mptcp` preset sets it).
    pub ack_filled_holes: Option<bool>,
    /// Heartbeats on idle paths (default true).
    pub heartbeats: Option<bool>,
    /// HB.interval (default "30s").
    pub hb_interval: Option<Raw>,
    /// RTO.Initial (default "3s").
    pub rto_initial: Option<Raw>,
    /// RTO.Min (default "1s").
    pub rto_min: Option<Raw>,
    /// RTO.Max (default "60s").
    pub rto_max: Option<Raw>,
    /// Delayed SACK timer (default "200ms").
    pub sack_delay: Option<Raw>,
    /// SACK every N packets (default 2).
    pub sack_freq: Option<u32>,
    /// Path.Max.Retrans (default 5).
    pub path_max_retrans: Option<u32>,
    /// Association.Max.Retrans (default 10).
    pub assoc_max_retrans: Option<u32>,
    /// Outage handling (off by default: RFC 9260's limits): the association fails only
    /// after this long without a packet from the peer, e.g. "300s".
    pub outage_tolerance: Option<Raw>,
    /// With outage handling, the longest wait between two tries of a silent path
    /// (default "1s").
    pub probe_interval: Option<Raw>,
    /// Initial ssthresh (default: the receiver's rbuf).
    pub initial_ssthresh: Option<Raw>,
    /// Initial cwnd in MTUs (default: RFC 9260's `min(4·MTU, max(2·MTU, 4380))`); 10 is
    /// what deployed TCP and QUIC stacks use.
    #[serde(default)]
    pub initial_window: Option<u32>,
}

/// `[receiver]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReceiverSpec {
    /// Receive buffer (default "64KB").
    pub rbuf: Option<Raw>,
}

/// `[metrics]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricsSpec {
    /// Width of a time-series bin (default "0.5s").
    pub bin: Option<Raw>,
    /// The endpoint whose radios `paths[].radio` model: "receiver" (default) or
    /// "sender".
    pub device: Option<String>,
}

/// `[[links]]`: a duplex link; both directions get the same parameters and independent
/// random streams.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Unique name, used by paths.
    pub name: String,
    /// Rate, e.g. "11Mbps" (not needed with a `trace`; with one, the reverse direction's).
    #[serde(default)]
    pub rate: Option<Raw>,
    /// Mahimahi capacity trace for the forward direction, relative to the scenario file.
    #[serde(default)]
    pub trace: Option<String>,
    /// Propagation delay, fixed or a range drawn once per run ("10ms..20ms").
    #[serde(default)]
    pub delay: Option<Raw>,
    /// Std. deviation of per-packet Gaussian jitter that keeps FIFO order.
    #[serde(default)]
    pub jitter: Option<Raw>,
    /// "normal" (default: delay + σ·G) or "half-normal" (delay + σ·|G|, the JAPS paper's
    /// "latency 10 + 2|G| ms").
    pub jitter_model: Option<String>,
    /// Drop-tail queue limit in packets (default 50), or "unlimited": nothing is dropped
    /// and a sender ahead of the link waits in its queue (a loss-free emulator such as a
    /// delaying socket, not a router).
    #[serde(default)]
    pub queue: Option<Raw>,
    /// Bernoulli loss probability, fixed or a range drawn once per run ("1%..2%").
    #[serde(default)]
    pub loss: Option<Raw>,
    /// Gilbert–Elliott loss in series: "markov1pct" or `{ p, r, h_good, h_bad }`.
    #[serde(default)]
    pub gilbert: Option<GilbertSpec>,
    /// A named loss model in series (the built-in `periodic`, or one a program
    /// registered), e.g. `loss_model = "periodic"`.
    #[serde(default)]
    pub loss_model: Option<String>,
    /// The loss model's parameters, e.g. `{ period = 100 }`.
    #[serde(default)]
    pub loss_model_params: ParamTable,
    /// Which directions `loss`, `gilbert` and `loss_model` act on: "both" (default), "forward" (the
    /// direction paths send data in) or "reverse" (the acknowledgements' direction).
    #[serde(default)]
    pub loss_direction: Option<String>,
    /// Where the loss models drop a packet: "entry" (as it reaches the link, before the
    /// queue: ns-2.35's `lossmodel`) or "exit" (after serialisation: it used the link).
    /// Default: "entry" under `association.compat = "ns2"`, "exit" otherwise.
    #[serde(default)]
    pub loss_at: Option<String>,
    /// Jitter may reorder packets (netem-like) instead of keeping FIFO order.
    #[serde(default)]
    pub reorder: Option<bool>,
    /// The queue's discipline: "droptail" (default), "red", "codel" or "fq_codel".
    #[serde(default)]
    pub aqm: Option<String>,
    /// Its parameters, e.g. `{ target_ms = 5, interval_ms = 100 }` (docs/scenario.md).
    #[serde(default)]
    pub aqm_params: ParamTable,
}

/// A Gilbert–Elliott model by name or by its four parameters.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum GilbertSpec {
    /// A named preset ("markov1pct").
    Preset(String),
    /// Explicit parameters.
    Params {
        /// P(good → bad) per packet.
        p: f64,
        /// P(bad → good) per packet.
        r: f64,
        /// Loss probability in the good state (default 0).
        #[serde(default)]
        h_good: f64,
        /// Loss probability in the bad state (default 1).
        #[serde(default = "one")]
        h_bad: f64,
    },
}

fn one() -> f64 {
    1.0
}

fn yes() -> bool {
    true
}

/// `[[paths]]`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSpec {
    /// Name shown in results.
    pub name: String,
    /// Links from sender to receiver; the return direction uses the same links reversed.
    pub links: Vec<String>,
    /// A backup path: it carries data only while no regular path is ACTIVE.
    #[serde(default)]
    pub backup: bool,
    /// Whether the path's address exists when the run starts (`false`: an event with
    /// `state = "added"` brings it in).
    #[serde(default = "yes")]
    pub present: bool,
    /// Price of the path's traffic per 10⁶ user bytes sent (a metered path).
    #[serde(default)]
    pub price_per_mb: Option<f64>,
    /// The device's radio on this path, for its energy: `"lte"` or `"wifi"`.
    #[serde(default)]
    pub radio: Option<String>,
    /// Values overriding the radio's model (`alpha_up`, `tail_s`, …).
    #[serde(default)]
    pub radio_params: ParamTable,
}

/// A field error while building: the dotted key and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct BuildError {
    /// Dotted key, e.g. `links[1].loss`.
    pub(crate) field: String,
    /// What is wrong with it.
    pub(crate) message: String,
}

impl BuildError {
    pub(crate) fn new(field: String, message: String) -> Self {
        BuildError { field, message }
    }
}

pub(crate) fn field<T>(name: &str, r: Result<T, String>) -> Result<T, BuildError> {
    r.map_err(|m| BuildError::new(name.to_string(), m))
}

pub(crate) fn params(table: &ParamTable, name: &str) -> Result<cmt_core::Params, BuildError> {
    use cmt_core::ParamValue;
    let mut out = BTreeMap::new();
    for (k, v) in table {
        let pv = match v {
            toml::Value::Integer(i) => ParamValue::Number(*i as f64),
            toml::Value::Float(x) => ParamValue::Number(*x),
            toml::Value::Boolean(b) => ParamValue::Bool(*b),
            toml::Value::String(s) => ParamValue::Text(s.clone()),
            other => {
                return Err(BuildError::new(
                    format!("{name}.{k}"),
                    format!("unsupported value {other}"),
                ))
            }
        };
        out.insert(k.clone(), pv);
    }
    Ok(cmt_core::Params(out))
}
