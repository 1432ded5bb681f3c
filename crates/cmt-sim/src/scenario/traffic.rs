//! Validation of `[[traffic]]` entries (docs/algorithms.md §11.3–11.10): open-loop
//! sources, TCP-like flows, further multipath associations (`kind = "cmt"`) and
//! application-limited web and video flows.

use super::links::{link_index, BuiltLink};
use super::{field, BuildError, Scenario, TrafficSpec};
use crate::traffic::{Pattern, Sizes};
use crate::units::{
    parse_duration, parse_probability, parse_rate, parse_size, parse_spread, Raw, Spread,
};
use cmt_core::Duration;

/// A validated background source (one per `count`).
#[derive(Clone, Debug, PartialEq)]
pub struct BuiltTraffic {
    /// Name (with `#k` for copies).
    pub name: String,
    /// A closed-loop flow: a backlogged association of our own core — TCP-like on one
    /// path, or a multipath `cmt` flow — instead of an open-loop source.
    pub tcp: bool,
    /// A closed-loop flow's paths, each its directional link indexes in order (a TCP
    /// flow has one, its `route`).
    pub paths: Vec<Vec<usize>>,
    /// A closed-loop flow's scheduler.
    pub scheduler: String,
    /// An application-limited flow: web objects with think times, or video segments
    /// (else backlogged).
    pub app: Option<crate::app::App>,
    /// Arrival process (open-loop sources).
    pub pattern: Pattern,
    /// Packet sizes.
    pub sizes: Sizes,
    /// Directional link indexes in order (a `cmt` flow's first path).
    pub route: Vec<usize>,
    /// Mean offered rate in bit/s, drawn per run when a load range is given.
    pub rate_bps: Spread<f64>,
    /// Start.
    pub start: Duration,
    /// Stop.
    pub stop: Option<Duration>,
    /// TCP flows: receive window, bytes.
    pub window: u32,
    /// TCP flows: full packet size on the wire (the flow's MTU), bytes.
    pub mtu: u32,
    /// TCP flows: acknowledge every this many packets.
    pub ack_every: u32,
    /// Closed-loop flows: ECN-capable transport.
    pub ecn: bool,
    /// Closed-loop flows: the congestion control's name.
    pub cc: String,
}

/// Most copies one `[[traffic]]` entry may ask for (`count`).
pub const MAX_COUNT: u32 = 1000;

/// A TCP flow's default receive window: large enough never to limit it.
pub const DEFAULT_WINDOW: u32 = 4 << 20;

pub(super) fn build_traffic(
    s: &Scenario,
    links: &[BuiltLink],
) -> Result<Vec<BuiltTraffic>, BuildError> {
    let mut out = Vec::new();
    for (i, t) in s.traffic.iter().enumerate() {
        let f = |k: &str| format!("traffic[{i}].{k}");
        let paths = routes(t, links, &f)?;
        let route = paths[0].clone();
        let count = copies(t, &f)?;
        let tcp = matches!(t.kind.as_str(), "tcp" | "cmt" | "web" | "video");
        if tcp && t.name == "association" {
            return Err(BuildError::new(
                f("name"),
                "`association` names the association under study in the results".into(),
            ));
        }
        if tcp && (t.rate.is_some() || t.load.is_some() || t.stop.is_some()) {
            return Err(BuildError::new(
                f("kind"),
                format!(
                    "a {} flow runs from its start to the end of the run: no rate, load or stop",
                    t.kind
                ),
            ));
        }
        let first_rate = links[route[0] / 2].rate_bps as f64;
        let rate = rate(t, tcp, first_rate, count, &f)?;
        let pattern = pattern(t, &f)?;
        let sizes = sizes(t, &f)?;
        let (window, mtu, ack_every) = tcp_settings(t, tcp, &f)?;
        let (scheduler, cc) = flow_algorithms(t, &f)?;
        let app = app(t, &f)?;
        for k in 0..count {
            out.push(BuiltTraffic {
                name: if count == 1 {
                    t.name.clone()
                } else {
                    format!("{}#{k}", t.name)
                },
                tcp,
                paths: if tcp { paths.clone() } else { Vec::new() },
                scheduler: scheduler.clone(),
                app: app.clone(),
                pattern,
                sizes,
                route: route.clone(),
                rate_bps: rate,
                start: dur(&t.start, "start", Duration::ZERO, &f)?,
                stop: t
                    .stop
                    .as_ref()
                    .map(|r| field(&f("stop"), parse_duration(r)))
                    .transpose()?,
                window,
                mtu,
                ack_every,
                ecn: t.ecn.unwrap_or(false),
                cc: cc.clone(),
            });
        }
    }
    Ok(out)
}

/// An optional duration key `k`, or `default`.
fn dur(
    r: &Option<Raw>,
    k: &str,
    default: Duration,
    f: &dyn Fn(&str) -> String,
) -> Result<Duration, BuildError> {
    r.as_ref()
        .map_or(Ok(default), |r| field(&f(k), parse_duration(r)))
}

/// Most paths a `cmt` flow may have (its path index fills three bits of the packets'
/// flow key for flow queueing).
pub const MAX_FLOW_PATHS: usize = 8;

/// The link directions the flow crosses: `links` (one route), or a `cmt` flow's
/// `paths` (one route each), in `direction`.
fn routes(
    t: &TrafficSpec,
    links: &[BuiltLink],
    f: &dyn Fn(&str) -> String,
) -> Result<Vec<Vec<usize>>, BuildError> {
    let reverse = match t.direction.as_deref() {
        None | Some("forward") => false,
        Some("reverse") => true,
        Some(o) => {
            return Err(BuildError::new(
                f("direction"),
                format!("unknown direction `{o}` (forward, reverse)"),
            ))
        }
    };
    if t.kind != "cmt" {
        if !t.paths.is_empty() || t.scheduler.is_some() {
            let k = if t.paths.is_empty() {
                "scheduler"
            } else {
                "paths"
            };
            return Err(BuildError::new(
                f(k),
                "only a cmt flow has this setting".into(),
            ));
        }
        return Ok(vec![route(&t.links, reverse, links, &f("links"))?]);
    }
    if !t.links.is_empty() {
        return Err(BuildError::new(
            f("links"),
            "a cmt flow names the links of each path in `paths`".into(),
        ));
    }
    if t.paths.is_empty() || t.paths.len() > MAX_FLOW_PATHS {
        return Err(BuildError::new(
            f("paths"),
            format!(
                "{} paths: give 1..{MAX_FLOW_PATHS}, each a list of links",
                t.paths.len()
            ),
        ));
    }
    let key = f("paths");
    t.paths
        .iter()
        .enumerate()
        .map(|(k, p)| route(p, reverse, links, &format!("{key}[{k}]")))
        .collect()
}

/// The directions of the links `names` (the key `key`), reversed with `reverse`.
fn route(
    names: &[String],
    reverse: bool,
    links: &[BuiltLink],
    key: &str,
) -> Result<Vec<usize>, BuildError> {
    if names.is_empty() {
        return Err(BuildError::new(key.into(), "give at least one link".into()));
    }
    let mut route = Vec::with_capacity(names.len());
    for (j, name) in names.iter().enumerate() {
        let k = link_index(links, name, || format!("{key}[{j}]"))?;
        route.push(2 * k + reverse as usize);
    }
    Ok(route)
}

/// `count`: identical copies of the flow, 1..=[`MAX_COUNT`].
fn copies(t: &TrafficSpec, f: &dyn Fn(&str) -> String) -> Result<u32, BuildError> {
    let count = t.count.unwrap_or(1);
    if count == 0 {
        return Err(BuildError::new(f("count"), "must be at least 1".into()));
    }
    if count > MAX_COUNT {
        return Err(BuildError::new(
            f("count"),
            format!("{count} copies: at most {MAX_COUNT} per [[traffic]] entry"),
        ));
    }
    Ok(count)
}

/// Each copy's rate: `rate`, or `load` as a share of the first link's rate, split
/// over the copies (none for a TCP flow).
fn rate(
    t: &TrafficSpec,
    tcp: bool,
    first_rate: f64,
    count: u32,
    f: &dyn Fn(&str) -> String,
) -> Result<Spread<f64>, BuildError> {
    let rate = match (&t.rate, &t.load) {
        _ if tcp => Spread::Fixed(0.0),
        (Some(r), None) => Spread::Fixed(field(&f("rate"), parse_rate(r))? as f64),
        (None, Some(l)) => match field(&f("load"), parse_spread(l, parse_probability))? {
            Spread::Fixed(x) => Spread::Fixed(x * first_rate),
            Spread::Uniform(a, b) => Spread::Uniform(a * first_rate, b * first_rate),
        },
        _ => {
            return Err(BuildError::new(
                f("rate"),
                "give exactly one of `rate` and `load`".into(),
            ))
        }
    };
    Ok(match rate {
        Spread::Fixed(x) => Spread::Fixed(x / count as f64),
        Spread::Uniform(a, b) => Spread::Uniform(a / count as f64, b / count as f64),
    })
}

/// `kind` and its timing keys: CBR, Poisson, Pareto on/off (`shape`, `burst`,
/// `idle`), VBR (`interval`); a TCP flow sends whenever its window allows.
fn pattern(t: &TrafficSpec, f: &dyn Fn(&str) -> String) -> Result<Pattern, BuildError> {
    Ok(match t.kind.as_str() {
        "cbr" | "tcp" | "cmt" | "web" | "video" => Pattern::Cbr,
        "poisson" => Pattern::Poisson,
        "pareto" => {
            let shape = t.shape.unwrap_or(1.5);
            if !(shape > 1.0 && shape.is_finite()) {
                return Err(BuildError::new(
                    f("shape"),
                    format!("{shape}: must be above 1 (finite mean)"),
                ));
            }
            let burst = dur(&t.burst, "burst", Duration::from_millis(500), f)?;
            if burst == Duration::ZERO {
                return Err(BuildError::new(f("burst"), "must be positive".into()));
            }
            Pattern::Pareto {
                burst,
                idle: dur(&t.idle, "idle", Duration::from_millis(500), f)?,
                shape,
            }
        }
        "vbr" => Pattern::Vbr {
            interval: dur(&t.interval, "interval", Duration::from_millis(200), f)?,
        },
        o => {
            return Err(BuildError::new(
                f("kind"),
                format!(
                    "unknown traffic kind `{o}` (cbr, poisson, pareto, vbr, tcp, cmt, web, video)"
                ),
            ))
        }
    })
}

/// Packet sizes: `size` (bytes or "mix"), or for VBR `min_size..=max_size`.
fn sizes(t: &TrafficSpec, f: &dyn Fn(&str) -> String) -> Result<Sizes, BuildError> {
    if t.kind == "vbr" {
        let (a, b) = (t.min_size.unwrap_or(100), t.max_size.unwrap_or(200));
        if a == 0 || a > b {
            return Err(BuildError::new(
                f("min_size"),
                format!("need 0 < min_size ≤ max_size, got {a} and {b}"),
            ));
        }
        return Ok(Sizes::Uniform(a, b));
    }
    Ok(match &t.size {
        None => Sizes::Fixed(1000),
        Some(Raw::Text(m)) if m == "mix" => Sizes::Mix,
        Some(r) => {
            let b = field(&f("size"), parse_size(r))?;
            if b == 0 || b > 65_535 {
                return Err(BuildError::new(
                    f("size"),
                    format!("{b} bytes: must be 1..65535"),
                ));
            }
            Sizes::Fixed(b as u32)
        }
    })
}

/// A TCP flow's receive window, packet size and acknowledgement frequency (`window`,
/// `size`, `ack_every`); `window` and `ack_every` belong to TCP flows only.
fn tcp_settings(
    t: &super::TrafficSpec,
    tcp: bool,
    f: &dyn Fn(&str) -> String,
) -> Result<(u32, u32, u32), BuildError> {
    if !tcp {
        if t.window.is_some() || t.ack_every.is_some() || t.ecn.is_some() {
            let k = if t.window.is_some() {
                "window"
            } else if t.ack_every.is_some() {
                "ack_every"
            } else {
                "ecn"
            };
            return Err(BuildError::new(
                f(k),
                "only a tcp, cmt, web or video flow has this setting".into(),
            ));
        }
        return Ok((DEFAULT_WINDOW, 0, 2));
    }
    let mtu = match &t.size {
        None => 1500,
        Some(r) => {
            let b = field(&f("size"), parse_size(r))?;
            if !(100..=65_535).contains(&b) {
                return Err(BuildError::new(
                    f("size"),
                    format!("{b} bytes: a tcp packet must be 100..65535"),
                ));
            }
            b as u32
        }
    };
    // A full chunk counts its payload and its 16-byte DATA header against the window.
    let chunk = (mtu - 48 + 16) as u64;
    let window = match &t.window {
        None => DEFAULT_WINDOW as u64,
        Some(Raw::Num(n)) if *n >= 1.0 && n.fract() == 0.0 => *n as u64 * chunk,
        Some(r @ Raw::Text(_)) => field(&f("window"), parse_size(r))?,
        Some(r) => {
            return Err(BuildError::new(
                f("window"),
                format!("{r}: a whole number of packets or a size"),
            ))
        }
    };
    if !(chunk..=1 << 30).contains(&window) {
        return Err(BuildError::new(
            f("window"),
            format!("{window} bytes: must hold one packet ({chunk} B) and at most 1 GiB"),
        ));
    }
    let ack_every = t.ack_every.unwrap_or(2);
    if !(1..=64).contains(&ack_every) {
        return Err(BuildError::new(
            f("ack_every"),
            format!("{ack_every}: must be 1..64"),
        ));
    }
    Ok((window as u32, mtu, ack_every))
}

/// The congestion controls a TCP-like flow may use.
const TCP_CCS: [&str; 4] = ["reno", "cubic", "linux-cubic", "bbr"];

/// Schedulers and congestion controls a `cmt` flow may not use: they need the
/// receiver-driven rates that only the association under study is configured with.
const RECEIVER_DRIVEN: [&str; 3] = ["receiver", "cmt-rev", "mptcp-rec"];

/// A closed-loop flow's scheduler and congestion control: a TCP flow's `cc` (Reno
/// unless named) over its one path; a `cmt` flow's `scheduler` (round-robin unless
/// named) and `cc`, any of the core's that needs no receiver-driven rates.
fn flow_algorithms(
    t: &super::TrafficSpec,
    f: &dyn Fn(&str) -> String,
) -> Result<(String, String), BuildError> {
    let rr = "round-robin".to_string();
    let name = t.cc.as_deref().unwrap_or("reno");
    match t.kind.as_str() {
        "tcp" | "web" | "video" => {}
        "cmt" => {
            let sched = t.scheduler.as_deref().unwrap_or("round-robin");
            let none = cmt_core::params::Params::default();
            let known = [
                (
                    "scheduler",
                    sched,
                    cmt_core::sched::by_name(sched, &none).err(),
                ),
                ("cc", name, cmt_core::cc::by_name(name, &none).err()),
            ];
            for (k, n, err) in known {
                if let Some(e) = err {
                    return Err(BuildError::new(f(k), e.0));
                }
                if RECEIVER_DRIVEN.contains(&n) {
                    return Err(BuildError::new(
                        f(k),
                        format!("`{n}` needs receiver-driven rates: the association's only"),
                    ));
                }
            }
            return Ok((sched.to_string(), name.to_string()));
        }
        _ if t.cc.is_some() => {
            return Err(BuildError::new(
                f("cc"),
                "only a tcp, cmt, web or video flow has this setting".into(),
            ))
        }
        _ => return Ok((rr, "reno".into())),
    }
    if let Some(known) = TCP_CCS.into_iter().find(|c| *c == name) {
        return Ok((rr, known.into()));
    }
    Err(BuildError::new(
        f("cc"),
        format!("unknown `{name}` ({})", TCP_CCS.join(", ")),
    ))
}

/// The encoding ladder a video flow has unless `bitrates` is given, bit/s (our choice:
/// the span of common 240p–1080p streams).
const LADDER: [f64; 6] = [400e3, 750e3, 1.5e6, 3e6, 4.5e6, 7.5e6];

/// An application-limited flow's model: a `web` flow's object sizes and think times
/// (`object`, `shape`, `idle`) or a `video` flow's player (`segment`, `bitrates`,
/// `buffer`, `safety`); these keys belong to those kinds only.
fn app(
    t: &super::TrafficSpec,
    f: &dyn Fn(&str) -> String,
) -> Result<Option<crate::app::App>, BuildError> {
    let only = |k: &str, kind: &str| {
        Err(BuildError::new(
            f(k),
            format!("only a {kind} flow has this setting"),
        ))
    };
    if t.kind != "web" && t.object.is_some() {
        return only("object", "web");
    }
    if t.kind != "video" {
        let set = [
            ("segment", t.segment.is_some()),
            ("bitrates", !t.bitrates.is_empty()),
            ("buffer", t.buffer.is_some()),
            ("safety", t.safety.is_some()),
        ];
        if let Some((k, _)) = set.iter().find(|(_, s)| *s) {
            return only(k, "video");
        }
    }
    match t.kind.as_str() {
        "web" => web(t, f).map(|m| Some(crate::app::App::Web(m))),
        "video" => video(t, f).map(|m| Some(crate::app::App::Video(m))),
        _ => Ok(None),
    }
}

/// A `web` flow's object sizes and think times.
fn web(
    t: &super::TrafficSpec,
    f: &dyn Fn(&str) -> String,
) -> Result<crate::app::WebModel, BuildError> {
    let object_mean = match &t.object {
        None => 50_000.0,
        Some(r) => field(&f("object"), parse_size(r))? as f64,
    };
    if !(1.0..=crate::app::MAX_OBJECT as f64).contains(&object_mean) {
        return Err(BuildError::new(
            f("object"),
            format!("{object_mean} bytes: must be 1 B..100 MB"),
        ));
    }
    let shape = t.shape.unwrap_or(1.2);
    if shape.is_nan() || shape <= 1.0 {
        return Err(BuildError::new(
            f("shape"),
            format!("{shape}: must be above 1 (finite mean), or inf for fixed sizes"),
        ));
    }
    Ok(crate::app::WebModel {
        object_mean,
        shape,
        think: dur(&t.idle, "idle", Duration::from_secs(1), f)?,
    })
}

/// A `video` flow's player.
fn video(
    t: &super::TrafficSpec,
    f: &dyn Fn(&str) -> String,
) -> Result<crate::app::VideoModel, BuildError> {
    let segment = dur(&t.segment, "segment", Duration::from_secs(4), f)?;
    if segment < Duration::from_millis(100) || segment > Duration::from_secs(60) {
        return Err(BuildError::new(f("segment"), "must be 100 ms..60 s".into()));
    }
    let ladder = if t.bitrates.is_empty() {
        LADDER.to_vec()
    } else {
        let mut l = Vec::with_capacity(t.bitrates.len());
        for (k, r) in t.bitrates.iter().enumerate() {
            let rate = field(&format!("{}[{k}]", f("bitrates")), parse_rate(r))? as f64;
            if rate <= 0.0 || l.last().is_some_and(|&p| rate <= p) {
                return Err(BuildError::new(
                    format!("{}[{k}]", f("bitrates")),
                    "rates must be positive and ascending".into(),
                ));
            }
            l.push(rate);
        }
        l
    };
    let buffer = dur(&t.buffer, "buffer", Duration::from_secs(30), f)?.as_secs_f64();
    if buffer < segment.as_secs_f64() {
        return Err(BuildError::new(
            f("buffer"),
            "must hold at least one segment".into(),
        ));
    }
    let safety = t.safety.unwrap_or(0.85);
    if !(safety > 0.0 && safety <= 1.0) {
        return Err(BuildError::new(
            f("safety"),
            format!("{safety}: must be in (0, 1]"),
        ));
    }
    Ok(crate::app::VideoModel {
        segment,
        ladder,
        buffer,
        safety,
    })
}
