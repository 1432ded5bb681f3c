//! A relayed path's settings: `LISTEN>TARGET[,KEY=VALUE…]` (the keys in the module
//! documentation of [`crate::relay`]), parsed with errors that name the bad part.

use std::net::SocketAddr;

use cmt_core::Duration;
use cmt_sim::link::{LinkChange, LinkParams};
use cmt_sim::loss::Gilbert;
use cmt_sim::scenario::LossDirection;
use cmt_sim::units::{parse_duration, parse_probability, parse_rate, Raw};

/// One relayed path.
#[derive(Clone, Debug)]
pub struct RelaySpec {
    /// Where the sender's packets arrive.
    pub listen: SocketAddr,
    /// Where they go.
    pub target: SocketAddr,
    /// Link parameters (both directions).
    pub params: LinkParams,
    /// Bernoulli loss probability.
    pub loss: f64,
    /// Gilbert–Elliott loss in series.
    pub gilbert: Option<Gilbert>,
    /// Which directions the loss models act on (`loss_direction=forward`: only towards
    /// the target, as a scenario's link with `loss_direction = "forward"`).
    pub loss_direction: LossDirection,
    /// Changes of both directions, by time since the relay started (in time order).
    pub changes: Vec<(Duration, LinkChange)>,
    /// A sender's mapping expires after this long without a datagram either way.
    pub idle: Duration,
    /// Mappings (senders) at most at once.
    pub senders: usize,
}

/// A mapping's idle time unless `idle=` says otherwise (longer than any heartbeat
/// interval of an association that carries on).
pub const DEFAULT_IDLE: Duration = Duration::from_secs(60);

/// Senders a path carries at most at once unless `senders=` says otherwise.
pub const DEFAULT_SENDERS: usize = 256;

/// `T/KEY=VALUE[/KEY=VALUE…]` of a `change=` setting.
fn parse_change(v: &str) -> Result<(Duration, LinkChange), String> {
    let mut parts = v.split('/');
    let when = parse_duration(&Raw::Text(parts.next().unwrap_or_default().trim().into()))?;
    let mut c = LinkChange::default();
    for p in parts {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| format!("`{p}`: expected KEY=VALUE"))?;
        let raw = Raw::Text(v.trim().to_string());
        match k.trim() {
            "delay" => c.delay = Some(parse_duration(&raw)?),
            "rate" => c.rate_bps = Some(parse_rate(&raw)?),
            "loss" => c.loss = Some(parse_probability(&raw)?),
            "state" if v.trim() == "down" => c.down = Some(true),
            "state" if v.trim() == "up" => c.down = Some(false),
            o => return Err(format!("`{o}`: delay, rate, loss or state=down|up")),
        }
    }
    if c == LinkChange::default() {
        return Err(format!("`{v}` changes nothing"));
    }
    Ok((when, c))
}

/// Parses one path spec (see the module documentation); errors name the bad part.
pub fn parse_spec(s: &str) -> Result<RelaySpec, String> {
    let mut parts = s.split(',');
    let head = parts.next().unwrap_or_default();
    let (l, t) = head
        .split_once('>')
        .ok_or_else(|| format!("`{head}`: expected LISTEN>TARGET"))?;
    let addr = |a: &str| {
        a.trim()
            .parse::<SocketAddr>()
            .map_err(|_| format!("`{a}` is not an address like 127.0.0.1:9899"))
    };
    let mut spec = RelaySpec {
        listen: addr(l)?,
        target: addr(t)?,
        params: LinkParams {
            rate_bps: 1_000_000_000,
            delay: Duration::ZERO,
            jitter: Duration::ZERO,
            jitter_half: false,
            queue: Some(100),
            reorder: false,
            trace: None,
            loss_at: cmt_sim::link::LossPoint::Exit,
            aqm: cmt_sim::link::Aqm::DropTail,
        },
        loss: 0.0,
        gilbert: None,
        loss_direction: LossDirection::Both,
        changes: Vec::new(),
        idle: DEFAULT_IDLE,
        senders: DEFAULT_SENDERS,
    };
    for p in parts {
        let (k, v) = p
            .split_once('=')
            .ok_or_else(|| format!("`{p}`: expected KEY=VALUE"))?;
        let raw = Raw::Text(v.trim().to_string());
        let e = |m: String| format!("`{k}`: {m}");
        match k.trim() {
            "rate" => spec.params.rate_bps = parse_rate(&raw).map_err(e)?,
            "delay" => spec.params.delay = parse_duration(&raw).map_err(e)?,
            "jitter" => spec.params.jitter = parse_duration(&raw).map_err(e)?,
            "loss" => spec.loss = parse_probability(&raw).map_err(e)?,
            "queue" if v.trim() == "unlimited" => spec.params.queue = None,
            "queue" => {
                spec.params.queue =
                    Some(v.trim().parse().map_err(|_| {
                        format!("`queue`: `{v}` is not a packet count or `unlimited`")
                    })?)
            }
            "jitter_model" => {
                spec.params.jitter_half = match v.trim() {
                    "half-normal" => true,
                    "normal" => false,
                    o => return Err(format!("`jitter_model`: `{o}` (normal or half-normal)")),
                }
            }
            "gilbert" if v.trim() == "markov1pct" => spec.gilbert = Some(Gilbert::markov_1pct()),
            "loss_direction" => {
                let d = v.trim();
                spec.loss_direction = LossDirection::parse(Some(d))
                    .map_err(|_| format!("`loss_direction`: `{d}` (both, forward or reverse)"))?
            }
            "change" => spec.changes.push(parse_change(v).map_err(e)?),
            "idle" => spec.idle = parse_duration(&raw).map_err(e)?,
            "senders" => {
                spec.senders = v
                    .trim()
                    .parse()
                    .ok()
                    .filter(|&n| (1..=65_536).contains(&n))
                    .ok_or_else(|| format!("`senders`: `{v}` is not a count of 1 to 65536"))?
            }
            "trace" => {
                let text = std::fs::read_to_string(v.trim())
                    .map_err(|err| format!("`trace`: cannot read {}: {err}", v.trim()))?;
                spec.params.trace =
                    Some(cmt_sim::trace::Trace::parse(&text).map_err(|m| format!("`trace`: {m}"))?);
            }
            other => return Err(format!("unknown relay setting `{other}`")),
        }
    }
    if spec.params.rate_bps == 0 {
        return Err("`rate` must be positive".into());
    }
    spec.changes.sort_by_key(|c| c.0);
    Ok(spec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trace_file_replaces_the_rate() {
        let dir = std::env::temp_dir().join(format!("cmtlab-trace-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("t.trace");
        std::fs::write(&f, "1\n2\n3\n4\n").unwrap();
        let s = parse_spec(&format!("127.0.0.1:1>127.0.0.1:2,trace={}", f.display())).unwrap();
        let t = s.params.trace.expect("trace");
        // 4 opportunities of 1500 bytes every 4 ms = 12 Mbit/s.
        assert!(
            (t.mean_rate_bps() - 12e6).abs() < 1.0,
            "{}",
            t.mean_rate_bps()
        );
    }

    #[test]
    fn specs_parse_and_mistakes_are_named() {
        let s = parse_spec("127.0.0.1:19001>127.0.0.1:9899,rate=2Mbps,delay=40ms,loss=1%,queue=20")
            .unwrap();
        assert_eq!(s.params.rate_bps, 2_000_000);
        assert_eq!(s.params.delay, Duration::from_millis(40));
        assert_eq!((s.loss, s.params.queue), (0.01, Some(20)));
        assert!(!s.params.jitter_half);
        assert_eq!(s.loss_direction, LossDirection::Both);
        let f = parse_spec("127.0.0.1:1>127.0.0.1:2,loss=1%,loss_direction=forward").unwrap();
        assert_eq!(f.loss_direction, LossDirection::Forward);
        // The JAPS paper's delaying socket: never drops, jitter σ·|G|.
        let d = parse_spec(
            "127.0.0.1:1>127.0.0.1:2,jitter=2ms,jitter_model=half-normal,queue=unlimited",
        )
        .unwrap();
        assert_eq!((d.params.queue, d.params.jitter_half), (None, true));
        let j = parse_spec("127.0.0.1:1>127.0.0.1:2,change=8s/delay=200ms,change=2s/state=down")
            .unwrap();
        let times: Vec<u64> = j
            .changes
            .iter()
            .map(|c| c.0.as_nanos() / 1_000_000)
            .collect();
        assert_eq!(times, vec![2000, 8000]);
        assert_eq!(j.changes[1].1.delay, Some(Duration::from_millis(200)));
        for (bad, want) in [
            (
                "127.0.0.1:1>127.0.0.1:2,queue=lots",
                "`queue`: `lots` is not a packet count or `unlimited`",
            ),
            (
                "127.0.0.1:1>127.0.0.1:2,jitter_model=pareto",
                "`jitter_model`: `pareto`",
            ),
            ("127.0.0.1:1", "expected LISTEN>TARGET"),
            ("x>127.0.0.1:1", "`x` is not an address"),
            ("127.0.0.1:1>127.0.0.1:2,rate=fast", "`rate`"),
            (
                "127.0.0.1:1>127.0.0.1:2,colour=red",
                "unknown relay setting `colour`",
            ),
            (
                "127.0.0.1:1>127.0.0.1:2,trace=/no/file",
                "`trace`: cannot read /no/file",
            ),
            (
                "127.0.0.1:1>127.0.0.1:2,change=5s/colour=red",
                "`change`: `colour`: delay, rate, loss or state=down|up",
            ),
            (
                "127.0.0.1:1>127.0.0.1:2,change=5s",
                "`change`: `5s` changes nothing",
            ),
            (
                "127.0.0.1:1>127.0.0.1:2,senders=0",
                "`senders`: `0` is not a count of 1 to 65536",
            ),
            ("127.0.0.1:1>127.0.0.1:2,idle=soon", "`idle`"),
            (
                "127.0.0.1:1>127.0.0.1:2,loss_direction=up",
                "`loss_direction`: `up` (both, forward or reverse)",
            ),
        ] {
            let e = parse_spec(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }
}
