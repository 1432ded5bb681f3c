//! The `[[links]]` tables: validation into [`BuiltLink`]s, one short function per key group.

use cmt_core::Duration;

use super::{field, params, BuildError, GilbertSpec, LinkSpec};
use crate::link::{Aqm, LossPoint};
use crate::loss::Gilbert;
use crate::loss_model::LossModelSpec;
use crate::trace::Trace;
use crate::units::{parse_duration, parse_probability, parse_rate, parse_spread, Raw, Spread};

/// A validated link (duplex; both directions share these values).
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltLink {
    /// Name.
    pub name: String,
    /// Rate, bits/s.
    pub rate_bps: u64,
    /// Propagation delay (drawn per run when a range).
    pub delay: Spread<Duration>,
    /// Gaussian jitter std. deviation.
    pub jitter: Duration,
    /// Jitter is σ·|G| (never below the base delay) instead of σ·G.
    pub jitter_half: bool,
    /// Queue limit, packets (`None`: unlimited).
    pub queue: Option<usize>,
    /// Bernoulli loss (drawn per run when a range).
    pub loss: Spread<f64>,
    /// Gilbert–Elliott model in series.
    pub gilbert: Option<Gilbert>,
    /// A named loss model in series (`loss_model`, `loss_model_params`).
    pub loss_model: Option<LossModelSpec>,
    /// The directions the loss models act on.
    pub loss_direction: LossDirection,
    /// Where they drop a packet (`None`: the association profile's default — before
    /// the queue under `compat = "ns2"`, after serialisation otherwise).
    pub loss_at: Option<LossPoint>,
    /// Jitter may reorder packets.
    pub reorder: bool,
    /// Forward-direction capacity trace (then `rate_bps` is its mean, or the reverse
    /// direction's rate when one was given).
    pub trace: Option<Trace>,
    /// Rate of the reverse direction when the forward one follows a trace.
    pub reverse_rate_bps: Option<u64>,
    /// The queue's discipline (both directions).
    pub aqm: Aqm,
}

/// The directions of a duplex link its loss models act on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossDirection {
    /// Both directions, each with its own random stream.
    #[default]
    Both,
    /// Only the direction paths send data in (sender to receiver).
    Forward,
    /// Only the way back (acknowledgements).
    Reverse,
}

impl LossDirection {
    /// Whether the loss models act on the forward (`reverse = false`) or the reverse
    /// direction.
    pub fn applies(self, reverse: bool) -> bool {
        match self {
            LossDirection::Both => true,
            LossDirection::Forward => !reverse,
            LossDirection::Reverse => reverse,
        }
    }

    /// `both` (also when absent), `forward` or `reverse`.
    pub fn parse(s: Option<&str>) -> Result<Self, String> {
        match s {
            None | Some("both") => Ok(LossDirection::Both),
            Some("forward") => Ok(LossDirection::Forward),
            Some("reverse") => Ok(LossDirection::Reverse),
            Some(o) => Err(format!("unknown direction `{o}` (both, forward, reverse)")),
        }
    }
}

/// A link's queue limit: packets (at least 1; default 50) or "unlimited".
fn parse_queue(q: Option<&Raw>) -> Result<Option<usize>, String> {
    match q {
        None => Ok(Some(50)),
        Some(Raw::Num(x)) if *x >= 1.0 && x.fract() == 0.0 && *x <= u32::MAX as f64 => {
            Ok(Some(*x as usize))
        }
        Some(Raw::Text(t)) if t == "unlimited" => Ok(None),
        Some(other) => Err(format!(
            "{other} is not a queue limit (a whole number of packets, at least 1, or \"unlimited\")"
        )),
    }
}

/// The index of the link named `name`, or an "unknown link" error at `field`.
pub(super) fn link_index(
    links: &[BuiltLink],
    name: &str,
    field: impl FnOnce() -> String,
) -> Result<usize, BuildError> {
    links
        .iter()
        .position(|l| l.name == name)
        .ok_or_else(|| BuildError::new(field(), format!("unknown link `{name}`")))
}

/// Validates every link; names must be unique.
pub(super) fn build_links(
    specs: &[LinkSpec],
    dir: Option<&std::path::Path>,
) -> Result<Vec<BuiltLink>, BuildError> {
    let mut links = Vec::with_capacity(specs.len());
    for (i, l) in specs.iter().enumerate() {
        if specs[..i].iter().any(|o| o.name == l.name) {
            return Err(BuildError::new(
                format!("links[{i}].name"),
                format!("duplicate link name `{}`", l.name),
            ));
        }
        links.push(build_link(i, l, dir)?);
    }
    Ok(links)
}

/// Validates link `i`; `dir` is where relative trace files are.
fn build_link(
    i: usize,
    l: &LinkSpec,
    dir: Option<&std::path::Path>,
) -> Result<BuiltLink, BuildError> {
    let f = |k: &str| format!("links[{i}].{k}");
    let delay = match &l.delay {
        Some(Raw::Num(x)) if *x > 60.0 => {
            return Err(BuildError::new(
                f("delay"),
                format!(
                    "{x}: a bare number is seconds, and a delay above 60 s is unusual; \
                     write the unit (\"{x}s\", or \"{x}ms\")"
                ),
            ))
        }
        Some(r) => field(&f("delay"), parse_spread(r, parse_duration))?,
        None => Spread::Fixed(Duration::ZERO),
    };
    let loss = match &l.loss {
        Some(r) => field(&f("loss"), parse_spread(r, parse_probability))?,
        None => Spread::Fixed(0.0),
    };
    let gilbert = gilbert(l.gilbert.as_ref(), &f)?;
    let loss_model = loss_model(l, &f)?;
    let queue = field(&f("queue"), parse_queue(l.queue.as_ref()))?;
    let rate = l
        .rate
        .as_ref()
        .map(|r| field(&f("rate"), parse_rate(r)))
        .transpose()?;
    let trace = trace(l.trace.as_deref(), dir, &f)?;
    let (rate_bps, reverse_rate_bps) = match (&trace, rate) {
        (None, Some(r)) => (r, None),
        (Some(t), r) => (t.mean_rate_bps().round() as u64, r),
        (None, None) => {
            return Err(BuildError::new(
                f("rate"),
                "missing: give `rate` or `trace`".into(),
            ))
        }
    };
    Ok(BuiltLink {
        name: l.name.clone(),
        rate_bps,
        trace,
        reverse_rate_bps,
        delay,
        jitter: match &l.jitter {
            Some(r) => field(&f("jitter"), parse_duration(r))?,
            None => Duration::ZERO,
        },
        jitter_half: match l.jitter_model.as_deref() {
            None | Some("normal") => false,
            Some("half-normal") => true,
            Some(o) => {
                return Err(BuildError::new(
                    f("jitter_model"),
                    format!("unknown `{o}` (normal or half-normal)"),
                ))
            }
        },
        queue,
        loss,
        gilbert,
        loss_model,
        loss_direction: field(
            &f("loss_direction"),
            LossDirection::parse(l.loss_direction.as_deref()),
        )?,
        loss_at: field(&f("loss_at"), loss_point(l.loss_at.as_deref()))?,
        reorder: l.reorder.unwrap_or(false),
        aqm: super::queues::aqm(l, &f)?,
    })
}

/// The `loss_at` key.
fn loss_point(s: Option<&str>) -> Result<Option<LossPoint>, String> {
    match s {
        None => Ok(None),
        Some("entry") => Ok(Some(LossPoint::Entry)),
        Some("exit") => Ok(Some(LossPoint::Exit)),
        Some(o) => Err(format!("unknown point `{o}` (entry, exit)")),
    }
}

/// The `gilbert` key: a preset name or the four parameters.
fn gilbert(
    spec: Option<&GilbertSpec>,
    f: &dyn Fn(&str) -> String,
) -> Result<Option<Gilbert>, BuildError> {
    Ok(match spec {
        None => None,
        Some(GilbertSpec::Preset(p)) if p == "none" => None,
        Some(GilbertSpec::Preset(p)) if p == "markov1pct" => Some(Gilbert::markov_1pct()),
        Some(GilbertSpec::Preset(p)) => {
            return Err(BuildError::new(
                f("gilbert"),
                format!("unknown preset `{p}` (known: markov1pct, none)"),
            ))
        }
        Some(GilbertSpec::Params {
            p,
            r,
            h_good,
            h_bad,
        }) => {
            for (k, v) in [("p", p), ("r", r), ("h_good", h_good), ("h_bad", h_bad)] {
                if !(0.0..=1.0).contains(v) {
                    return Err(BuildError::new(
                        f(&format!("gilbert.{k}")),
                        format!("{v} is not a probability"),
                    ));
                }
            }
            Some(Gilbert {
                p: *p,
                r: *r,
                h_good: *h_good,
                h_bad: *h_bad,
            })
        }
    })
}

/// The `loss_model` and `loss_model_params` keys: a name from the loss-model registry.
fn loss_model(
    l: &LinkSpec,
    f: &dyn Fn(&str) -> String,
) -> Result<Option<LossModelSpec>, BuildError> {
    let Some(name) = &l.loss_model else {
        if l.loss_model_params.is_empty() {
            return Ok(None);
        }
        return Err(BuildError::new(
            f("loss_model_params"),
            "set, but no loss_model is named".into(),
        ));
    };
    let p = params(&l.loss_model_params, &f("loss_model_params"))?;
    LossModelSpec::new(name, p)
        .map(Some)
        .map_err(|e| BuildError::new(f("loss_model"), e.0))
}

/// The `trace` key: a Mahimahi file, relative to the scenario's directory.
fn trace(
    file: Option<&str>,
    dir: Option<&std::path::Path>,
    f: &dyn Fn(&str) -> String,
) -> Result<Option<Trace>, BuildError> {
    Ok(match file {
        None => None,
        Some(file) => {
            let path = dir.map_or_else(|| std::path::PathBuf::from(file), |d| d.join(file));
            let text =
                crate::input_file::read_text(&path, crate::input_file::MAX_TRACE).map_err(|e| {
                    BuildError::new(f("trace"), format!("cannot read {}: {e}", path.display()))
                })?;
            Some(
                Trace::parse(&text)
                    .map_err(|e| BuildError::new(f("trace"), format!("{}: {e}", path.display())))?,
            )
        }
    })
}
