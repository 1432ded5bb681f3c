//! `cmtlab relay`: userspace link impairment for real UDP traffic, per path, with the
//! simulator's own link model (`cmt_sim::link`): serialisation at a rate, drop-tail
//! queue, propagation delay, jitter, Bernoulli and Gilbert–Elliott loss — in both
//! directions, each with its own random streams. The kernel here has no netem; this is
//! how real transfers see WiFi/LTE/3G-like paths on one machine (the JAPS paper's
//! "DelaySocket").
//!
//! A path relays datagrams arriving at `listen` to `target`, and the answers back to the
//! sender they are for: each sender (address and port) gets a socket of its own towards
//! the target, as behind a NAT (`relay/mappings.rs`), so one path carries any number of
//! associations; all of them share the path's link, as flows share a bottleneck. A
//! mapping expires after `idle` (default 60 s) without a datagram either way; at most
//! `senders` (default 256) exist at once. [`RelayStats`] counts what the path did.
//! Spec syntax (one per path):
//! `LISTEN>TARGET[,rate=RATE][,delay=D][,jitter=D][,jitter_model=half-normal][,loss=P][,loss_direction=both|forward|reverse][,queue=N|unlimited][,gilbert=markov1pct][,trace=FILE][,idle=D][,senders=N]`,
//! e.g. `127.0.0.1:19001>127.0.0.1:9899,rate=2Mbps,delay=40ms,loss=1%`. `trace=FILE` is
//! a Mahimahi capacity trace (one line per 1500-byte delivery opportunity, ms) that
//! replaces the rate in both directions. `jitter_model=half-normal` adds σ·|G| instead of
//! σ·G (the JAPS paper's "10 + 2|G| ms"); `loss_direction=forward` applies the loss
//! models towards the target only (data, not acknowledgements); `queue=unlimited` never
//! drops (a delaying socket, not a router). `change=T/KEY=VALUE[/KEY=VALUE…]` (any number of them) changes
//! both directions T after the relay starts, as a scenario's link events do: `delay`,
//! `rate`, `loss`, or `state=down` / `state=up` (e.g. `change=8s/delay=200ms`, a delay
//! that jumps).

mod mappings;
mod spec;

pub use spec::{parse_spec, RelaySpec, DEFAULT_IDLE, DEFAULT_SENDERS};

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use cmt_core::Time;
use cmt_sim::link::{Cargo, DropCause, Finished, InFlight, Link, LinkChange, LinkStreams, Offer};
use cmt_sim::loss::LossChain;
use cmt_sim::rng::stream;

use crate::io::{poll_recv_any, Gso, RxBatch, TxQueue, Udp};
use mappings::{Mapped, Mappings};

/// Datagrams a direction dropped, by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Drops {
    /// The drop-tail queue was full.
    pub queue: u64,
    /// The loss model dropped it.
    pub loss: u64,
    /// The path was down.
    pub down: u64,
}

impl Drops {
    /// All causes.
    pub fn total(&self) -> u64 {
        self.queue + self.loss + self.down
    }

    fn count(&mut self, cause: DropCause) {
        match cause {
            DropCause::Queue | DropCause::Aqm => self.queue += 1,
            DropCause::Loss => self.loss += 1,
            DropCause::Down => self.down += 1,
        }
    }
}

/// Counters of one relayed path, kept current while it runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RelayStats {
    /// Datagrams relayed towards the target (`[0]`) and back to senders (`[1]`).
    pub forwarded: [u64; 2],
    /// Datagrams dropped on the way, per direction and cause.
    pub dropped: [Drops; 2],
    /// Senders that got a mapping.
    pub senders: u64,
    /// Mappings removed after the idle time.
    pub expired: u64,
    /// Datagrams of new senders refused because `senders` mappings existed.
    pub refused: u64,
    /// Datagrams whose mapping expired while they were on the way.
    pub orphaned: u64,
    /// Datagrams the system refused to send (or a mapping's socket could not bind).
    pub send_errors: u64,
    /// Mappings that exist now.
    pub active: u64,
}

/// Runs one path's relay until the task is dropped.
pub async fn run_path(spec: RelaySpec, seed: u64) -> std::io::Result<()> {
    run_path_counted(spec, seed, Arc::default()).await
}

/// [`run_path`], keeping `stats` current (read them while it runs, or after the task
/// is dropped).
pub async fn run_path_counted(
    spec: RelaySpec,
    seed: u64,
    stats: Arc<Mutex<RelayStats>>,
) -> std::io::Result<()> {
    let front = Udp::bind(spec.listen)
        .map_err(|e| std::io::Error::new(e.kind(), format!("cannot bind {}: {e}", spec.listen)))?;
    let mut r = Relay {
        maps: Mappings::new(front, spec.target, spec.idle, spec.senders),
        links: [link(&spec, seed, "forward"), link(&spec, seed, "reverse")],
        held: BTreeMap::new(),
        service: [None, None],
        arrivals: BTreeMap::new(),
        next_id: 0,
        start: tokio::time::Instant::now(),
        st: RelayStats::default(),
    };
    let (mut rx, mut tx) = (RxBatch::default(), TxQueue::default());
    let (mut first, mut changes) = (0, spec.changes.iter().peekable());
    loop {
        let due = r.service.iter().flatten().copied();
        let due = due
            .chain(r.arrivals.keys().next().map(|k| k.0))
            .chain(changes.peek().map(|c| Time::ZERO + c.0))
            .chain(r.maps.next_expiry())
            .min();
        let wake = due.map(|t| r.at(t));
        let socks = &r.maps.socks;
        let mut got = tokio::select! {
            d = std::future::poll_fn(|cx| poll_recv_any(cx, socks, &mut first, &mut rx)) => Some(d),
            _ = async {
                match wake {
                    Some(w) => tokio::time::sleep_until(w).await,
                    None => std::future::pending().await,
                }
            } => None,
        };
        let t = r.now();
        while let Some((_, c)) = changes.next_if(|c| Time::ZERO + c.0 <= t) {
            r.change(c);
        }
        // The datagram that woke us and the rest of its batch.
        while let Some(d) = got.take().or_else(|| rx.next()) {
            let bytes = rx.bytes(&d).to_vec();
            r.offer(t, d.socket, d.from, bytes);
        }
        r.serve(t);
        r.send_due(t, spec.target, &mut tx).await;
        // Every datagram of the batch was handled: socket indices may move now.
        r.st.expired += r.maps.expire(r.now()) as u64;
        r.st.active = r.maps.len() as u64;
        if let Ok(mut s) = stats.lock() {
            s.clone_from(&r.st);
        }
    }
}

/// One direction of the path: its link with the spec's impairments and random streams.
fn link(spec: &RelaySpec, seed: u64, dir: &str) -> Link<InFlight> {
    let name = spec.listen.to_string();
    let chain = if spec.loss_direction.applies(dir == "reverse") {
        LossChain::new(spec.loss, spec.gilbert)
    } else {
        LossChain::new(0.0, None)
    };
    Link::new(
        format!("{name}/{dir}"),
        spec.params.clone(),
        chain,
        LinkStreams {
            loss: stream(seed, &format!("relay/{name}/{dir}/loss")),
            jitter: stream(seed, &format!("relay/{name}/{dir}/jitter")),
            queue: stream(seed, &format!("relay/{name}/{dir}/queue")),
        },
    )
}

/// A relayed path's state between wake-ups.
struct Relay {
    maps: Mappings,
    /// `[0]` carries senders' datagrams to the target, `[1]` the answers back.
    links: [Link<InFlight>; 2],
    /// Datagrams in the links by id: their mapping and bytes.
    held: BTreeMap<usize, (u64, Vec<u8>)>,
    /// When each direction's serialisation ends.
    service: [Option<Time>; 2],
    /// Datagrams through their link, by arrival time: direction, mapping, bytes.
    arrivals: BTreeMap<(Time, usize), (usize, u64, Vec<u8>)>,
    next_id: usize,
    start: tokio::time::Instant,
    st: RelayStats,
}

impl Relay {
    fn now(&self) -> Time {
        Time::from_nanos(self.start.elapsed().as_nanos() as u64)
    }

    fn at(&self, t: Time) -> tokio::time::Instant {
        self.start + std::time::Duration::from_nanos(t.as_nanos())
    }

    /// A scheduled change of both directions; what it drops is counted.
    fn change(&mut self, c: &LinkChange) {
        for (dir, l) in self.links.iter_mut().enumerate() {
            for p in l.change(c) {
                if let Some(id) = p.relayed_id() {
                    self.held.remove(&id);
                }
                self.st.dropped[dir].down += 1;
            }
        }
    }

    /// A datagram that arrived on socket `socket` from `from` enters its direction's
    /// link: from a sender (socket 0) towards the target, through the sender's mapping;
    /// from the target (a mapping's socket) back to that mapping's sender.
    fn offer(&mut self, t: Time, socket: usize, from: SocketAddr, bytes: Vec<u8>) {
        let (dir, map) = if socket == 0 {
            match self.maps.of_sender(from, t) {
                Ok(Mapped::Id(id, made)) => {
                    self.st.senders += u64::from(made);
                    (0, id)
                }
                Ok(Mapped::Full) => return self.st.refused += 1,
                Err(_) => return self.st.send_errors += 1,
            }
        } else {
            match self.maps.by_socket(socket, t) {
                Some(id) => (1, id),
                None => return self.st.orphaned += 1,
            }
        };
        let id = self.next_id;
        self.next_id += 1;
        let pkt = InFlight {
            cargo: Cargo::Relayed(id),
            route: cmt_sim::ids::RouteId(dir),
            hop: 0,
            size: bytes.len() as u32 + 28,
            sent_at: t,
            // The relay forwards payloads only; the ECN field is not carried over.
            ecn: cmt_sim::link::Ecn::NotEct,
        };
        self.held.insert(id, (map, bytes));
        match self.links[dir].offer(t, pkt) {
            Offer::Started(end) => self.service[dir] = Some(end),
            Offer::Queued => self.forget_dropped(dir),
            Offer::Dropped(lost, cause) => self.forget(dir, &lost, cause),
        }
    }

    /// Ends the serialisations due by `t`: what survives the link's impairments is
    /// scheduled to arrive, what does not is counted and forgotten.
    fn serve(&mut self, t: Time) {
        for dir in 0..2 {
            while let Some(end) = self.service[dir].filter(|&e| e <= t) {
                let (fate, next) = self.links[dir].finish(end);
                self.service[dir] = next;
                match fate {
                    Some(Finished::Arrives(when, p)) => {
                        let id = p.relayed_id();
                        if let Some((id, (m, b))) =
                            id.and_then(|id| Some((id, self.held.remove(&id)?)))
                        {
                            self.arrivals.insert((when, id), (dir, m, b));
                        }
                    }
                    Some(Finished::Lost(p, cause)) => self.forget(dir, &p, cause),
                    None => {}
                }
                self.forget_dropped(dir);
            }
        }
    }

    /// What the link's queue discipline dropped besides the datagram at hand: counted
    /// and forgotten.
    fn forget_dropped(&mut self, dir: usize) {
        for (p, cause) in self.links[dir].take_dropped() {
            self.forget(dir, &p, cause);
        }
    }

    /// A datagram the link lost: counted and forgotten.
    fn forget(&mut self, dir: usize, p: &InFlight, cause: DropCause) {
        if let Some(id) = p.relayed_id() {
            self.held.remove(&id);
        }
        self.st.dropped[dir].count(cause);
    }

    /// Sends every datagram due by `t`, consecutive ones of a socket batched: towards
    /// the target from the sender's mapping, back to the sender from the listening
    /// socket.
    async fn send_due(&mut self, t: Time, target: SocketAddr, tx: &mut TxQueue) {
        while let Some(e) = self.arrivals.first_entry() {
            if e.key().0 > t {
                break;
            }
            let (dir, map, bytes) = e.remove();
            let Some((sock, sender)) = self.maps.get(map) else {
                self.st.orphaned += 1;
                continue;
            };
            let (out, to) = if dir == 0 {
                (sock, target)
            } else {
                (0, sender)
            };
            let segments = Gso::Auto.segments(to, self.maps.socks[out].max_segments());
            tx.push((out, to, false), &bytes, segments);
            self.st.forwarded[dir] += 1;
        }
        for b in tx.batches() {
            if self.maps.socks[b.local].send(b, tx.bytes(b)).await.is_err() {
                self.st.send_errors += b.datagrams() as u64;
            }
        }
        tx.clear();
    }
}
