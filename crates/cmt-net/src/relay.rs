//! `cmtlab relay`: userspace link impairment for real UDP traffic, per path, with the
//! simulator's own link model (`cmt_sim::link`): serialisation at a rate, drop-tail
//! queue, propagation delay, jitter, Bernoulli and Gilbert–Elliott loss — in both
//! directions, each with its own random streams. The kernel here has no netem; this is
//! how real transfers see WiFi/LTE/3G-like paths on one machine (the JAPS paper's
//! "DelaySocket").
//!
//! A path relays datagrams arriving at `listen` to `target`, and the answers back to
//! whoever sent the first datagram. Spec syntax (one per path):
//! `LISTEN>TARGET[,rate=RATE][,delay=D][,jitter=D][,jitter_model=half-normal][,loss=P][,queue=N|unlimited][,gilbert=markov1pct][,trace=FILE]`,
//! e.g. `127.0.0.1:19001>127.0.0.1:9899,rate=2Mbps,delay=40ms,loss=1%`. `trace=FILE` is
//! a Mahimahi capacity trace (one line per 1500-byte delivery opportunity, ms) that
//! replaces the rate in both directions. `jitter_model=half-normal` adds σ·|G| instead of
//! σ·G (the JAPS paper's "10 + 2|G| ms"); `queue=unlimited` never drops (a delaying
//! socket, not a router). `change=T/KEY=VALUE[/KEY=VALUE…]` (any number of them) changes
//! both directions T after the relay starts, as a scenario's link events do: `delay`,
//! `rate`, `loss`, or `state=down` / `state=up` (e.g. `change=8s/delay=200ms`, a delay
//! that jumps).

use std::collections::BTreeMap;
use std::net::SocketAddr;

use cmt_core::{Duration, Time};
use cmt_sim::link::{Cargo, Finished, InFlight, Link, LinkChange, LinkParams, Offer};
use cmt_sim::loss::{Gilbert, LossChain};
use cmt_sim::rng::stream;
use cmt_sim::units::{parse_duration, parse_probability, parse_rate, Raw};

use crate::io::{poll_recv_any, Gso, RxBatch, TxQueue, Udp};

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
    /// Changes of both directions, by time since the relay started (in time order).
    pub changes: Vec<(Duration, LinkChange)>,
}

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
        },
        loss: 0.0,
        gilbert: None,
        changes: Vec::new(),
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
            "change" => spec.changes.push(parse_change(v).map_err(e)?),
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

/// Counters of one relayed path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RelayStats {
    /// Datagrams relayed towards the target / back.
    pub forwarded: [u64; 2],
    /// Datagrams dropped by the queue or the loss model, per direction.
    pub dropped: [u64; 2],
}

/// Runs one path's relay until the task is dropped.
pub async fn run_path(spec: RelaySpec, seed: u64) -> std::io::Result<()> {
    let front = Udp::bind(spec.listen)
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot bind {}: {e}", spec.listen)))?;
    let back_addr: SocketAddr = if spec.target.is_ipv4() {
        "0.0.0.0:0".parse().expect("literal")
    } else {
        "[::]:0".parse().expect("literal")
    };
    let back = Udp::bind(back_addr)?;
    // Index 0 receives from the sender and sends back to it; 1 faces the target.
    let socks = [front, back];
    let name = spec.listen.to_string();
    let link = |dir: &str| {
        Link::new(
            format!("{name}/{dir}"),
            spec.params.clone(),
            LossChain::new(spec.loss, spec.gilbert),
            stream(seed, &format!("relay/{name}/{dir}/loss")),
            stream(seed, &format!("relay/{name}/{dir}/jitter")),
        )
    };
    let mut links: [Link<InFlight>; 2] = [link("forward"), link("reverse")];
    let start = tokio::time::Instant::now();
    let now = || Time::from_nanos(start.elapsed().as_nanos() as u64);
    let at = |t: Time| start + std::time::Duration::from_nanos(t.as_nanos());
    // Datagrams in the links by id; serialisation ends; arrivals.
    let mut held: BTreeMap<usize, Vec<u8>> = BTreeMap::new();
    let mut service: [Option<Time>; 2] = [None, None];
    let mut arrivals: BTreeMap<(Time, usize), (usize, Vec<u8>)> = BTreeMap::new();
    let mut next_id = 0usize;
    let mut sender: Option<SocketAddr> = None;
    let (mut rx, mut tx) = (RxBatch::default(), TxQueue::default());
    let (mut first, mut changes) = (0, spec.changes.iter().peekable());
    loop {
        let due = service
            .iter()
            .flatten()
            .copied()
            .chain(arrivals.keys().next().map(|k| k.0))
            .chain(changes.peek().map(|c| Time::ZERO + c.0))
            .min();
        let mut got = tokio::select! {
            d = std::future::poll_fn(|cx| poll_recv_any(cx, &socks, &mut first, &mut rx)) => Some(d),
            _ = async {
                match due {
                    Some(t) => tokio::time::sleep_until(at(t)).await,
                    None => std::future::pending().await,
                }
            } => None,
        };
        let t = now();
        while let Some((_, c)) = changes.next_if(|c| Time::ZERO + c.0 <= t) {
            for l in &mut links {
                for p in l.change(c) {
                    p.relayed_id().map(|id| held.remove(&id));
                }
            }
        }
        // The datagram that woke us and the rest of its batch.
        while let Some(d) = got.take().or_else(|| rx.next()) {
            let dir = d.socket;
            if dir == 0 {
                sender.get_or_insert(d.from);
            }
            let bytes = rx.bytes(&d).to_vec();
            let id = next_id;
            next_id += 1;
            let pkt = InFlight {
                cargo: Cargo::Relayed(id),
                route: cmt_sim::ids::RouteId(dir),
                hop: 0,
                size: bytes.len() as u32 + 28,
                sent_at: t,
            };
            held.insert(id, bytes);
            match links[dir].offer(t, pkt) {
                Offer::Started(end) => service[dir] = Some(end),
                Offer::Queued => {}
                Offer::Dropped(..) => {
                    held.remove(&id);
                }
            }
        }
        for dir in 0..2 {
            serve(
                &mut links[dir],
                dir,
                &mut service[dir],
                t,
                &mut held,
                &mut arrivals,
            );
        }
        // Everything due leaves now, consecutive datagrams of a direction batched.
        while let Some(e) = arrivals.first_entry() {
            if e.key().0 > t {
                break;
            }
            let (dir, bytes) = e.remove();
            let (out, to) = match dir {
                0 => (1, Some(spec.target)),
                _ => (0, sender),
            };
            if let Some(to) = to {
                tx.push(
                    out,
                    to,
                    &bytes,
                    Gso::Auto.segments(to, socks[out].max_segments()),
                );
            }
        }
        for b in tx.batches() {
            let _ = socks[b.local].send(b, tx.bytes(b)).await;
        }
        tx.clear();
    }
}

/// Ends the serialisations of direction `dir` due by `t`: what survives the link's
/// impairments is scheduled to arrive, what does not is forgotten.
fn serve(
    link: &mut Link<InFlight>,
    dir: usize,
    service: &mut Option<Time>,
    t: Time,
    held: &mut BTreeMap<usize, Vec<u8>>,
    arrivals: &mut BTreeMap<(Time, usize), (usize, Vec<u8>)>,
) {
    while let Some(end) = service.filter(|&e| e <= t) {
        let (fate, next) = link.finish(end);
        *service = next;
        match fate {
            Some(Finished::Arrives(when, p)) => {
                let id = p.relayed_id();
                if let Some((id, b)) = id.and_then(|id| Some((id, held.remove(&id)?))) {
                    arrivals.insert((when, id), (dir, b));
                }
            }
            Some(Finished::Lost(p, _)) => {
                if let Some(id) = p.relayed_id() {
                    held.remove(&id);
                }
            }
            None => {}
        }
    }
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
        ] {
            let e = parse_spec(bad).unwrap_err();
            assert!(e.contains(want), "{bad}: {e}");
        }
    }
}
