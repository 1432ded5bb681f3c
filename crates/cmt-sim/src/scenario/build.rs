//! Validation and conversion of a parsed [`Scenario`] into the values the simulator uses.

use cmt_core::cc::{self, CcFactory};
use cmt_core::preset;
use cmt_core::rtx::{self, RtxFactory};
use cmt_core::sched::{self, SchedulerFactory};
use cmt_core::{Compat, Config, Duration, MaxBurstMode, Params};

use super::events::{build_events, BuiltEvent};
use super::limits::{at_most_max_time, MAX_BINS, MAX_FILE_SIZE};
use super::links::{build_links, link_index, BuiltLink};
use super::traffic::BuiltTraffic;
use super::{field, params, BuildError, Scenario};
use crate::units::{parse_duration, parse_size, Raw};

/// What the association does.
#[derive(Clone, Debug, PartialEq)]
pub enum Workload {
    /// Backlogged bulk transfer for this long.
    Timed(Duration),
    /// Transfer this many bytes, giving up after `limit`.
    File {
        /// Bytes.
        bytes: u64,
        /// Simulated-time limit.
        limit: Duration,
    },
}

/// A validated path: indexes into the link list, sender to receiver.
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltPath {
    /// Name.
    pub name: String,
    /// Link indexes in forward order.
    pub links: Vec<usize>,
    /// A backup path (`paths[].backup`).
    pub backup: bool,
    /// Its address exists at the start (`paths[].present`).
    pub present: bool,
    /// Price per 10⁶ user bytes sent (`paths[].price_per_mb`).
    pub price_per_mb: Option<f64>,
    /// The device's radio on it (`paths[].radio`, `radio_params`).
    pub radio: Option<crate::energy::RadioModel>,
}

/// A scenario ready to simulate.
pub struct Built {
    /// Scenario name.
    pub name: String,
    /// Seed of all random streams.
    pub seed: u64,
    /// Workload.
    pub workload: Workload,
    /// Protocol configuration for both endpoints.
    pub config: Config,
    /// Scheduler factory.
    pub scheduler: Box<dyn SchedulerFactory>,
    /// Retransmission policy factory.
    pub rtx: Box<dyn RtxFactory>,
    /// Congestion control factory.
    pub cc: Box<dyn CcFactory>,
    /// The parameters the three algorithms were built with.
    pub params: AlgorithmParams,
    /// Links.
    pub links: Vec<BuiltLink>,
    /// Paths.
    pub paths: Vec<BuiltPath>,
    /// Metrics bin width.
    pub bin: Duration,
    /// The endpoint whose radios `paths[].radio` model (`metrics.device`).
    pub device: crate::energy::Device,
    /// Scheduled link changes, in time order.
    pub events: Vec<BuiltEvent>,
    /// Background sources.
    pub traffic: Vec<BuiltTraffic>,
    /// Give the sender each path's configured loss rate (docs/algorithms.md §1.5 "oracle").
    pub oracle_loss: bool,
    /// Fingerprint of everything this run was built from: the scenario text, the
    /// overrides and the contents of capacity traces (16 hex digits; set by the loader).
    pub inputs: String,
}

/// ns-2.35's `initialSsthresh_` (bytes), whatever the receive window.
const NS2_INITIAL_SSTHRESH: u64 = 65536;

/// The receiver-driven estimator settings from `association.receiver_params`.
fn rev_config(p: &Params) -> Result<cmt_core::rev::RevConfig, cmt_core::params::ParamError> {
    p.expect_only(
        "receiver_params",
        &[
            "rtt_literal",
            "sample_literal",
            "per_packet",
            "phi",
            "theta",
            "tolerance",
        ],
    )?;
    let d = cmt_core::rev::RevConfig::default();
    let unit = |k: &str, default: f64| -> Result<f64, cmt_core::params::ParamError> {
        let x = p.number(k, default)?;
        if (0.0..=1.0).contains(&x) {
            Ok(x)
        } else {
            Err(cmt_core::params::ParamError(format!(
                "parameter `{k}` must be in 0..=1, got {x}"
            )))
        }
    };
    let tolerance = p.number("tolerance", d.tolerance)?;
    if tolerance < 1.0 {
        return Err(cmt_core::params::ParamError(format!(
            "parameter `tolerance` must be at least 1, got {tolerance}"
        )));
    }
    Ok(cmt_core::rev::RevConfig {
        estimator: cmt_core::rev::EstimatorConfig {
            rtt_literal: p.flag("rtt_literal", d.estimator.rtt_literal)?,
            sample_literal: p.flag("sample_literal", false)?,
            per_packet: p.flag("per_packet", false)?,
            phi: unit("phi", d.estimator.phi)?,
            theta: unit("theta", d.estimator.theta)?,
            ..d.estimator
        },
        tolerance,
        ..d
    })
}

fn opt_dur(raw: &Option<Raw>, name: &str, default: Duration) -> Result<Duration, BuildError> {
    raw.as_ref()
        .map_or(Ok(default), |r| field(name, parse_duration(r)))
}

/// The factories of the association's three algorithms, and their parameters.
type Algorithms = (
    Box<dyn SchedulerFactory>,
    Box<dyn RtxFactory>,
    Box<dyn CcFactory>,
    AlgorithmParams,
);

/// The names and parameters the scenario gave its three algorithms (what a real run of
/// the scenario builds them with; a factory's own name may differ, as `cubic` with
/// `flavour = "linux"` calls itself `linux-cubic`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AlgorithmParams {
    /// The scheduler, retransmission policy and congestion control names, as given (or
    /// the preset's).
    pub names: [String; 3],
    /// `association.scheduler_params`.
    pub scheduler: cmt_core::Params,
    /// `association.rtx_params`.
    pub rtx: cmt_core::Params,
    /// `association.cc_params`.
    pub cc: cmt_core::Params,
}

pub(super) fn build(
    s: &Scenario,
    default_name: Option<&str>,
    dir: Option<&std::path::Path>,
) -> Result<Built, BuildError> {
    let mut config = config(s)?;
    let (scheduler, rtx, cc, params) = algorithms(s, &mut config)?;
    let workload = workload(s)?;
    let links = build_links(&s.links, dir)?;
    let paths = build_paths(s, &links)?;
    let bin = metrics_bin(s, &workload)?;
    let device = match s.metrics.device.as_deref() {
        None | Some("receiver") => crate::energy::Device::Receiver,
        Some("sender") => crate::energy::Device::Sender,
        Some(o) => {
            return Err(BuildError::new(
                "metrics.device".into(),
                format!("unknown `{o}` (known: receiver, sender)"),
            ))
        }
    };
    let end = match workload {
        Workload::Timed(t) => t,
        Workload::File { limit, .. } => limit,
    };
    let events = build_events(s, &links, end)?;
    let traffic = super::traffic::build_traffic(s, &links)?;
    let oracle_loss = oracle_loss(s)?;
    Ok(Built {
        inputs: String::new(),
        name: s
            .name
            .clone()
            .or(default_name.map(str::to_string))
            .unwrap_or_else(|| "scenario".into()),
        seed: s.seed,
        workload,
        config,
        scheduler,
        rtx,
        cc,
        params,
        links,
        paths,
        bin,
        device,
        events,
        traffic,
        oracle_loss,
    })
}

/// The `[association]` and `[receiver]` protocol settings (algorithms aside).
fn config(s: &Scenario) -> Result<Config, BuildError> {
    let a = &s.association;
    let d = Config::default();
    let rbuf = match &s.receiver.rbuf {
        Some(r) => field("receiver.rbuf", parse_size(r))?,
        None => d.rbuf as u64,
    };
    let rbuf = u32::try_from(rbuf).map_err(|_| {
        BuildError::new(
            "receiver.rbuf".to_string(),
            "too large (max 4 GiB − 1)".to_string(),
        )
    })?;
    let compat = match a.compat.as_deref() {
        None | Some("rfc") => Compat::Rfc,
        Some("ns2") => Compat::Ns2,
        Some(other) => {
            return Err(BuildError::new(
                "association.compat".into(),
                format!("unknown `{other}` (known: rfc, ns2)"),
            ))
        }
    };
    // ns-2.35's defaults where they differ from ours (`tcl/lib/ns-default.tcl`).
    let (d_burst_mode, d_ssthresh) = match compat {
        Compat::Rfc => (MaxBurstMode::Always, None),
        Compat::Ns2 => (MaxBurstMode::Ns2, Some(NS2_INITIAL_SSTHRESH)),
    };
    Ok(Config {
        compat,
        mtu: a.mtu.unwrap_or(d.mtu),
        ip_header_len: a.ip_header.unwrap_or(d.ip_header_len),
        rbuf,
        rto_initial: opt_dur(&a.rto_initial, "association.rto_initial", d.rto_initial)?,
        rto_min: opt_dur(&a.rto_min, "association.rto_min", d.rto_min)?,
        rto_max: opt_dur(&a.rto_max, "association.rto_max", d.rto_max)?,
        max_burst: a.max_burst.unwrap_or(d.max_burst),
        max_burst_mode: match a.max_burst_mode.as_deref() {
            None => d_burst_mode,
            Some("rfc") => MaxBurstMode::Always,
            Some("ns2") => MaxBurstMode::Ns2,
            Some(other) => {
                return Err(BuildError::new(
                    "association.max_burst_mode".into(),
                    format!("unknown mode `{other}` (known: rfc, ns2)"),
                ))
            }
        },
        path_max_retrans: a.path_max_retrans.unwrap_or(d.path_max_retrans),
        assoc_max_retrans: a.assoc_max_retrans.unwrap_or(d.assoc_max_retrans),
        heartbeats: a.heartbeats.unwrap_or(d.heartbeats),
        hb_interval: opt_dur(&a.hb_interval, "association.hb_interval", d.hb_interval)?,
        sack_delay: opt_dur(&a.sack_delay, "association.sack_delay", d.sack_delay)?,
        sack_freq: a.sack_freq.unwrap_or(d.sack_freq),
        dupthresh: a.dupthresh.unwrap_or(d.dupthresh),
        sfr: a.sfr.unwrap_or(d.sfr),
        cuc: a.cuc.unwrap_or(d.cuc),
        dac: a.dac.unwrap_or(d.dac),
        pf_enabled: a.pf.unwrap_or(d.pf_enabled),
        pfmr: a.pfmr.unwrap_or(d.pfmr),
        pf_cwnd_mtus: a.pf_cwnd_mtus.unwrap_or(d.pf_cwnd_mtus),
        initial_ssthresh: match &a.initial_ssthresh {
            Some(r) => Some(field("association.initial_ssthresh", parse_size(r))?),
            None => d_ssthresh,
        },
        initial_window: match a.initial_window {
            Some(0) => {
                return Err(BuildError::new(
                    "association.initial_window".into(),
                    "0: the initial window is at least one packet".into(),
                ))
            }
            w => w,
        },
        idle_cwnd_decay: d.idle_cwnd_decay,
        max_gap_blocks: d.max_gap_blocks,
        rev: None,
        confirm_paths: a.confirm_paths.unwrap_or(false),
        outage: outage(a)?,
        ecn: a.ecn.unwrap_or(false),
        recovery: match a.recovery.as_deref() {
            None => d.recovery,
            Some(r) => field("association.recovery", r.parse())?,
        },
        reinject: match a.reinject.as_deref() {
            None => d.reinject,
            Some(r) => field("association.reinject", r.parse())?,
        },
        send_buffer: match a.send_buffer.as_deref() {
            None => d.send_buffer,
            Some(r) => field("association.send_buffer", r.parse())?,
        },
        prr: a.prr.unwrap_or(d.prr),
        ack_filled_holes: a.ack_filled_holes.unwrap_or(d.ack_filled_holes),
        // Simulated transfers end at delivery; no association closes.
        sack_immediately: d.sack_immediately,
    })
}

/// `outage_tolerance` and `probe_interval`: outage handling, on when the tolerance is
/// given.
fn outage(a: &super::AssociationSpec) -> Result<Option<cmt_core::config::Outage>, BuildError> {
    let d = cmt_core::config::Outage::default();
    let probe_interval = opt_dur(
        &a.probe_interval,
        "association.probe_interval",
        d.probe_interval,
    )?;
    match &a.outage_tolerance {
        None if a.probe_interval.is_some() => Err(BuildError::new(
            "association.probe_interval".into(),
            "applies with outage_tolerance only".into(),
        )),
        None => Ok(None),
        Some(r) => {
            let tolerance = field("association.outage_tolerance", parse_duration(r))?;
            Ok(Some(cmt_core::config::Outage {
                tolerance: at_most_max_time("association.outage_tolerance", tolerance)?,
                probe_interval,
            }))
        }
    }
}

/// The scheduler, retransmission policy and congestion control of the association
/// (a preset's, unless named), and the receiver-driven settings the preset or
/// `receiver_rates` switch on; checks the finished `config`.
fn algorithms(s: &Scenario, config: &mut Config) -> Result<Algorithms, BuildError> {
    let a = &s.association;
    let (p_sched, p_rtx, p_cc, p_rev) = match a.preset.as_deref() {
        None => ("round-robin", "rtx-cwnd", "reno", false),
        Some("db-cmt") => ("db-cmt", "rtx-cl", "db-cmt", false),
        Some("a-cmt") => ("db-cmt", "rtx-cwnd", "a-cmt", false),
        Some("cmt-qa") => ("cmt-qa", "rtx-cwnd", "cmt-qa", false),
        Some("cmt-rev") => ("cmt-rev", "rtx-cwnd", "receiver", true),
        Some("mptcp-rec") => ("mptcp-rec", "rtx-cwnd", "receiver", true),
        Some("linux-mptcp") => ("linux-mptcp", "rtx-same", "linux-cubic", false),
        Some("picoquic-rr") => ("picoquic-rr", "rtx-asap", "reno", false),
        Some(o) => {
            return Err(BuildError::new(
                "association.preset".into(),
                format!(
                    "unknown preset `{o}` (known: db-cmt, a-cmt, cmt-qa, cmt-rev, mptcp-rec, \
                     linux-mptcp, picoquic-rr)"
                ),
            ))
        }
    };
    if let Some(name) = a.preset.as_deref() {
        // What the deployed stacks run besides their algorithms (decisions D43, D52–D55,
        // D57), for every key the scenario leaves out.
        preset::apply(name, config, |k| given(a, k));
    }
    if a.receiver_rates.unwrap_or(p_rev) {
        config.rev = Some(
            rev_config(&params(&a.receiver_params, "association.receiver_params")?)
                .map_err(|e| BuildError::new("association.receiver_params".to_string(), e.0))?,
        );
    } else if !a.receiver_params.is_empty() {
        return Err(BuildError::new(
            "association.receiver_params".into(),
            "set, but receiver_rates is off".into(),
        ));
    }
    field("association", config.validate())?;
    let sched_name = a.scheduler.as_deref().unwrap_or(p_sched);
    let rtx_name = a.rtx.as_deref().unwrap_or(p_rtx);
    let cc_name = a.cc.as_deref().unwrap_or(p_cc);
    let given = AlgorithmParams {
        names: [sched_name, rtx_name, cc_name].map(str::to_string),
        scheduler: params(&a.scheduler_params, "association.scheduler_params")?,
        rtx: params(&a.rtx_params, "association.rtx_params")?,
        cc: params(&a.cc_params, "association.cc_params")?,
    };
    let scheduler = sched::by_name(sched_name, &given.scheduler)
        .map_err(|e| BuildError::new("association.scheduler".to_string(), e.0))?;
    let rtx = rtx::by_name(rtx_name, &given.rtx)
        .map_err(|e| BuildError::new("association.rtx".to_string(), e.0))?;
    let cc = cc::by_name(cc_name, &given.cc)
        .map_err(|e| BuildError::new("association.cc".to_string(), e.0))?;
    Ok((scheduler, rtx, cc, given))
}

/// Which of the keys a preset may give the scenario set itself.
fn given(a: &super::AssociationSpec, key: preset::Key) -> bool {
    use preset::Key;
    match key {
        Key::Recovery => a.recovery.is_some(),
        Key::Reinject => a.reinject.is_some(),
        Key::SendBuffer => a.send_buffer.is_some(),
        Key::Prr => a.prr.is_some(),
        Key::RtoMin => a.rto_min.is_some(),
        Key::RtoInitial => a.rto_initial.is_some(),
        Key::RtoMax => a.rto_max.is_some(),
        Key::InitialWindow => a.initial_window.is_some(),
        Key::MaxBurst => a.max_burst.is_some(),
        Key::SackDelay => a.sack_delay.is_some(),
        Key::Pf => a.pf.is_some(),
        Key::Pfmr => a.pfmr.is_some(),
        Key::AckFilledHoles => a.ack_filled_holes.is_some(),
    }
}

/// `duration` (a bulk run) or `file_size` with `time_limit` (a file transfer).
fn workload(s: &Scenario) -> Result<Workload, BuildError> {
    Ok(match (&s.duration, &s.file_size) {
        (Some(dur), None) => {
            let t = at_most_max_time("duration", field("duration", parse_duration(dur))?)?;
            if t == Duration::ZERO {
                return Err(BuildError::new(
                    "duration".into(),
                    "must be positive".into(),
                ));
            }
            Workload::Timed(t)
        }
        (None, Some(size)) => {
            let bytes = field("file_size", parse_size(size))?;
            if bytes == 0 || bytes > MAX_FILE_SIZE {
                return Err(BuildError::new(
                    "file_size".into(),
                    format!("{size}: must be positive and at most 1 TiB"),
                ));
            }
            Workload::File {
                bytes,
                limit: at_most_max_time(
                    "time_limit",
                    opt_dur(&s.time_limit, "time_limit", Duration::from_secs(3600))?,
                )?,
            }
        }
        (Some(_), Some(_)) => {
            return Err(BuildError::new(
                "duration".into(),
                "give either `duration` or `file_size`, not both".into(),
            ))
        }
        (None, None) => {
            return Err(BuildError::new(
                "duration".into(),
                "missing: give `duration` (bulk run) or `file_size` (file transfer)".into(),
            ))
        }
    })
}

/// `[[paths]]`: unique names, each a chain of known links.
fn build_paths(s: &Scenario, links: &[BuiltLink]) -> Result<Vec<BuiltPath>, BuildError> {
    if s.paths.is_empty() {
        return Err(BuildError::new(
            "paths".into(),
            "at least one path is required".into(),
        ));
    }
    if s.paths.iter().all(|p| !p.present) {
        return Err(BuildError::new(
            "paths".into(),
            "every path is absent at the start (`present = false`): the association needs one"
                .into(),
        ));
    }
    let mut paths = Vec::with_capacity(s.paths.len());
    for (i, p) in s.paths.iter().enumerate() {
        if s.paths[..i].iter().any(|q| q.name == p.name) {
            return Err(BuildError::new(
                format!("paths[{i}].name"),
                format!("duplicate path name `{}`", p.name),
            ));
        }
        if p.links.is_empty() {
            return Err(BuildError::new(
                format!("paths[{i}].links"),
                "a path needs at least one link".into(),
            ));
        }
        let mut idx = Vec::with_capacity(p.links.len());
        for (j, name) in p.links.iter().enumerate() {
            idx.push(link_index(links, name, || {
                format!("paths[{i}].links[{j}]")
            })?);
        }
        let price_per_mb = match p.price_per_mb {
            Some(x) if !(x.is_finite() && x >= 0.0) => {
                return Err(BuildError::new(
                    format!("paths[{i}].price_per_mb"),
                    format!("{x}: a price ≥ 0"),
                ))
            }
            x => x,
        };
        let radio = match &p.radio {
            Some(kind) => Some(field(
                &format!("paths[{i}].radio"),
                crate::energy::RadioModel::build(kind, &p.radio_params),
            )?),
            None if !p.radio_params.is_empty() => {
                return Err(BuildError::new(
                    format!("paths[{i}].radio_params"),
                    "given without `radio`".into(),
                ))
            }
            None => None,
        };
        paths.push(BuiltPath {
            name: p.name.clone(),
            links: idx,
            backup: p.backup,
            present: p.present,
            price_per_mb,
            radio,
        });
    }
    Ok(paths)
}

/// `metrics.bin`: positive, and at most [`MAX_BINS`] bins over the run.
fn metrics_bin(s: &Scenario, workload: &Workload) -> Result<Duration, BuildError> {
    let bin = match &s.metrics.bin {
        Some(r) => field("metrics.bin", parse_duration(r))?,
        None => Duration::from_millis(500),
    };
    if bin == Duration::ZERO {
        return Err(BuildError::new(
            "metrics.bin".into(),
            "must be positive".into(),
        ));
    }
    let run_time = match workload {
        Workload::Timed(d) => d,
        Workload::File { limit, .. } => limit,
    };
    if run_time.as_nanos() / bin.as_nanos() > MAX_BINS {
        return Err(BuildError::new(
            "metrics.bin".into(),
            format!(
                "{} s bins over {} s of run are more than {MAX_BINS} bins: use a longer bin",
                bin.as_secs_f64(),
                run_time.as_secs_f64()
            ),
        ));
    }
    Ok(bin)
}

/// `association.loss_rate`: whether algorithms get each path's configured loss.
fn oracle_loss(s: &Scenario) -> Result<bool, BuildError> {
    Ok(match s.association.loss_rate.as_deref() {
        None | Some("estimated") => false,
        Some("oracle") => true,
        Some(o) => {
            return Err(BuildError::new(
                "association.loss_rate".into(),
                format!("unknown `{o}` (estimated or oracle)"),
            ))
        }
    })
}
