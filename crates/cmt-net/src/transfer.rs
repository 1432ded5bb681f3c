//! Moving one file over several UDP paths: the sender connects (INIT … COOKIE ACK),
//! writes the file, closes gracefully when everything is acknowledged; the receiver
//! listens, accepts one association, writes what arrives in order to a file and returns
//! when the peer has shut down. On the sending side path i pairs local address i with
//! remote address i; the accepting side pairs its addresses with the peer's (see
//! [`pair_remotes`]) and then answers each path from wherever its packets come (relays,
//! NATs). The runtime confirms paths before use (RFC 9260 §5.4) and runs CMT-PF, so a
//! path that dies mid-transfer stops getting new data after its second timeout.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;

use bytes::Bytes;
use cmt_core::cc;
use cmt_core::params::Params;
use cmt_core::rev::RevConfig;
use cmt_core::rtx;
use cmt_core::sched;
use cmt_core::setup::{
    Connector, Established, ListenOutcome, Listener, SetupConfig, CAUSE_OUT_OF_RESOURCE,
    CAUSE_USER_INITIATED_ABORT,
};
use cmt_core::wire::chunk_type;
use cmt_core::{
    Algorithms, Association, Chunk, Closing, Config, Event, Observer, Packet, PathId, Payload,
    SendKind, Time,
};

use crate::io::{Arrival, Sockets};
use crate::sink::{hex, Sink};
use crate::source::Source;
use crate::trust::Trust;

/// Algorithms and buffer of a transfer.
#[derive(Clone, Debug)]
pub struct Options {
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
    /// Write every datagram sent and received to this pcap file.
    pub pcap: Option<std::path::PathBuf>,
    /// When notified (e.g. on Ctrl-C), abort: an established association sends an ABORT
    /// (RFC 9260 §9.1) so the peer stops at once instead of timing out, and the transfer
    /// returns an error.
    pub abort: Option<std::sync::Arc<tokio::sync::Notify>>,
    /// Called about every 250 ms with the bytes done so far and the per-path counters.
    pub progress: Option<fn(u64, &[PathCount])>,
    /// The receiver gives up when nothing has come from an established peer for this
    /// long (seconds). The default, 130 s, is twice RTO.Max plus 10 s: a live sender,
    /// even backed off to RTO.Max, retransmits or sends a HEARTBEAT well within it — a
    /// sender that vanished (its ABORT lost, its host gone) does not.
    pub peer_silence_s: f64,
    /// Receiver: only INITs from these addresses start an association (empty: anyone);
    /// others get no answer.
    pub peers: Vec<IpAddr>,
    /// Capacity of path i in bytes/s when the operator knows it (the sender then gives it
    /// to the scheduler as the simulator does, e.g. for JAPS's `bandwidth = "oracle"`);
    /// empty: unknown.
    pub capacities: Vec<Option<f64>>,
}

impl Options {
    /// Checks every option before a packet is sent (so a mistake never leaves a peer
    /// waiting on a half-built association); the error names the option.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_for(crate::IPV4_UDP_OVERHEAD)
    }

    /// [`validate`](Self::validate) for paths whose IP + UDP headers take `overhead`
    /// bytes (48 over IPv6).
    fn validate_for(&self, overhead: u32) -> Result<(), String> {
        if !self.timeout_s.is_finite() || self.timeout_s <= 0.0 {
            return Err(format!(
                "timeout {}: give a positive, finite number of seconds",
                self.timeout_s
            ));
        }
        if !self.peer_silence_s.is_finite() || self.peer_silence_s <= 0.0 {
            return Err(format!(
                "peer silence {}: give a positive, finite number of seconds",
                self.peer_silence_s
            ));
        }
        let p = Params::default();
        sched::by_name(&self.scheduler, &p).map_err(|e| format!("scheduler: {}", e.0))?;
        rtx::by_name(&self.rtx, &p).map_err(|e| format!("rtx: {}", e.0))?;
        cc::by_name(&self.cc, &p).map_err(|e| format!("cc: {}", e.0))?;
        let cfg = Config {
            mtu: self.mtu,
            ip_header_len: overhead,
            rbuf: self.rbuf,
            ..Config::default()
        };
        cfg.validate()
    }

    /// The whole-transfer time limit, from `from`.
    fn deadline(&self, from: Time) -> Time {
        Time::from_nanos(
            from.as_nanos()
                .saturating_add((self.timeout_s * 1e9) as u64),
        )
    }
}

/// IP + UDP header bytes of the largest kind among `addrs`: 48 if any is IPv6, else 28.
/// One value per association: chunk sizes are the same on every path.
fn overhead_of(addrs: &[SocketAddr]) -> u32 {
    if addrs.iter().any(|a| a.is_ipv6()) {
        crate::IPV6_UDP_OVERHEAD
    } else {
        crate::IPV4_UDP_OVERHEAD
    }
}

/// The earlier of an optional timer and a deadline.
fn until(timer: Option<Time>, deadline: Time) -> Option<Time> {
    Some(timer.map_or(deadline, |t| t.min(deadline)))
}

impl Default for Options {
    fn default() -> Self {
        Options {
            scheduler: "round-robin".into(),
            rtx: "rtx-cwnd".into(),
            cc: "reno".into(),
            rbuf: 4 << 20,
            mtu: 1500,
            timeout_s: 600.0,
            receiver_rates: false,
            pcap: None,
            abort: None,
            progress: None,
            peer_silence_s: 130.0,
            peers: Vec::new(),
            capacities: Vec::new(),
        }
    }
}

/// Per-path counters kept by the runtime's observer.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PathCount {
    /// DATA packets sent.
    pub sent_packets: u64,
    /// Payload bytes sent, retransmissions included.
    pub sent_bytes: u64,
    /// DATA packets retransmitted.
    pub retransmissions: u64,
    /// Packets carrying DATA that arrived on this path's local address.
    pub received_data_packets: u64,
}

/// The observer of a runtime association.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Per path.
    pub paths: Vec<PathCount>,
    /// Bytes delivered in order.
    pub delivered: u64,
}

impl Counters {
    fn path(&mut self, path: PathId) -> &mut PathCount {
        if self.paths.len() <= path.0 {
            self.paths.resize(path.0 + 1, PathCount::default());
        }
        &mut self.paths[path.0]
    }
}

impl Observer for Counters {
    fn event(&mut self, _now: Time, e: &Event) {
        match *e {
            Event::DataSent {
                path, bytes, kind, ..
            } => {
                let p = self.path(path);
                p.sent_packets += 1;
                p.sent_bytes += bytes as u64;
                if matches!(kind, SendKind::FastRetransmit | SendKind::TimeoutRetransmit) {
                    p.retransmissions += 1;
                }
            }
            Event::Delivered { bytes, .. } => self.delivered += bytes as u64,
            _ => {}
        }
    }
}

/// What a finished transfer reports.
#[derive(Clone, Debug)]
pub struct Report {
    /// Payload bytes moved.
    pub bytes: u64,
    /// Seconds from the first packet to the graceful close.
    pub seconds: f64,
    /// SHA-256 of the data, hex.
    pub sha256: String,
    /// Per path counters (sender side: what it sent).
    pub paths: Vec<PathCount>,
    /// Packets that did not parse or carried a wrong verification tag.
    pub rejected: u64,
    /// Whether receiver-driven rate control was negotiated (see
    /// [`Options::receiver_rates`]).
    pub receiver_rates: bool,
    /// Path i's (local, remote) addresses.
    pub routes: Vec<(SocketAddr, SocketAddr)>,
    /// Sender: the receiver confirmed it stored exactly these bytes (same length and
    /// SHA-256, a FILE-DIGEST bundled with its SHUTDOWN ACK). Receiver: it sent that
    /// confirmation. False with a peer that does not support FILE-DIGEST.
    pub confirmed: bool,
}

impl Report {
    /// Goodput in Mbit/s.
    pub fn goodput_mbps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.seconds.max(1e-9) / 1e6
    }
}

/// Whether both ends announced the receiver-driven chunk types.
fn negotiated_receiver_rates(o: &Options, est: &Established) -> bool {
    o.receiver_rates
        && [chunk_type::ROUND_INFO, chunk_type::RATE_ADVERT]
            .iter()
            .all(|t| est.peer_extensions.contains(t))
}

/// The association of a transfer over `paths` paths, with the options' algorithms;
/// `receiver_rates` as negotiated.
fn association(
    o: &Options,
    paths: usize,
    init: cmt_core::AssocInit,
    receiver_rates: bool,
    overhead: u32,
) -> Result<Association<Counters>, String> {
    let p = Params::default();
    let sched = sched::by_name(&o.scheduler, &p).map_err(|e| e.0)?;
    let rtx = rtx::by_name(&o.rtx, &p).map_err(|e| e.0)?;
    // Without rate adverts the receiver-driven allowance has nothing to follow.
    let cc_name = match o.cc.as_str() {
        "receiver" if !receiver_rates => "reno",
        name => name,
    };
    let cc = cc::by_name(cc_name, &p).map_err(|e| e.0)?;
    let cfg = Config {
        mtu: o.mtu,
        ip_header_len: overhead,
        rbuf: o.rbuf,
        confirm_paths: true,
        // CMT-PF (docs/algorithms.md §1.6): a path that times out twice in a row gets no new data
        // until a HEARTBEAT on it is answered, so a path that died mid-transfer does not
        // hold chunks hostage for its backed-off RTO (1 + 2 + … + 32 s). PFMR 1, not
        // CMT-PF's 0: a lone timeout, common when minRTT bursts onto the slower path,
        // then does not park a live path (measured through the relay, 2 × 20 Mbit/s:
        // minRTT 21 Mbit/s with PFMR 0, 34–37 with PFMR 1, 34 without PF).
        pf_enabled: true,
        pfmr: 1,
        rev: receiver_rates.then(RevConfig::default),
        ..Config::default()
    };
    let algs = Algorithms {
        scheduler: sched.build(paths),
        rtx: rtx.build(),
        cc: cc.as_ref(),
    };
    Association::new(cfg, paths, algs, init, Counters::default())
}

fn setup_config(o: &Options, locals: &[SocketAddr]) -> SetupConfig {
    SetupConfig {
        rbuf: o.rbuf,
        addresses: locals.iter().map(|a| a.ip()).collect(),
        extensions: if o.receiver_rates {
            vec![
                chunk_type::ROUND_INFO,
                chunk_type::RATE_ADVERT,
                chunk_type::FILE_DIGEST,
            ]
        } else {
            vec![chunk_type::FILE_DIGEST]
        },
        ..SetupConfig::default()
    }
}

/// Sends every transmit the association has now.
async fn flush(
    socks: &mut Sockets,
    assoc: &mut Association<Counters>,
    routes: &Routes,
) -> std::io::Result<()> {
    let now = socks.now();
    while let Some(t) = assoc.poll_transmit(now) {
        let (local, remote) = routes.paths[t.path.0.min(routes.paths.len() - 1)];
        // A failing interface is a lost packet to the protocol, not the end of the
        // transfer: the other paths carry on.
        let _ = socks.send(local, remote, routes.peer_port, &t.packet).await;
    }
    Ok(())
}

/// Which local socket and remote address each path uses, the peer's SCTP port, and the
/// path of each local socket's arrivals.
struct Routes {
    /// The peer's SCTP port (RFC 6951: independent of its UDP ports).
    peer_port: u16,
    /// Path i: (local socket index, remote address). Path 0 is the handshake's.
    paths: Vec<(usize, SocketAddr)>,
    /// Path of the arrivals on each local socket (a socket without a path of its own
    /// reports to path 0: its packets still belong to the association).
    of_local: Vec<usize>,
}

impl Routes {
    fn new(locals: usize, paths: Vec<(usize, SocketAddr)>, peer_port: u16) -> Routes {
        let mut of_local = vec![0; locals];
        for (i, &(l, _)) in paths.iter().enumerate() {
            of_local[l] = i;
        }
        Routes {
            peer_port,
            paths,
            of_local,
        }
    }
    fn addresses(&self, socks: &Sockets) -> Vec<(SocketAddr, SocketAddr)> {
        let locals = socks.local_addrs();
        self.paths.iter().map(|&(l, r)| (locals[l], r)).collect()
    }
    /// Follows the peer: a packet of the association that came to `local` from `from`
    /// makes `from` that path's remote address. An accepting side only guesses its
    /// remotes from the INIT; behind a relay or a NAT the peer's packets come from
    /// elsewhere, and answers must go back the way they came.
    fn latch(&mut self, local: usize, from: SocketAddr) {
        let Some(&k) = self.of_local.get(local) else {
            return;
        };
        if self.paths[k].0 == local {
            self.paths[k].1 = from;
        }
    }
    fn path_of(&self, local: usize) -> PathId {
        PathId(self.of_local.get(local).copied().unwrap_or(0))
    }
}

/// Progress reports at most every 250 ms.
struct Ticker {
    every: Time,
    next: Time,
}

impl Ticker {
    fn new() -> Self {
        Ticker {
            every: Time::from_nanos(250_000_000),
            next: Time::ZERO,
        }
    }
    /// The sooner of `timer` and the next report (when reporting).
    fn wake(&self, timer: Option<Time>, o: &Options) -> Option<Time> {
        match (timer, o.progress.is_some()) {
            (Some(t), true) => Some(t.min(self.next)),
            (None, true) => Some(self.next),
            (t, false) => t,
        }
    }
    fn tick(&mut self, now: Time, done: u64, paths: &[PathCount], o: &Options) {
        if let Some(f) = o.progress {
            if now >= self.next {
                f(done, paths);
                self.next = Time::from_nanos(now.as_nanos() + self.every.as_nanos());
            }
        }
    }
}

/// What ended a wait.
enum Wake {
    /// A datagram arrived.
    Packet(Arrival),
    /// The timer asked for expired.
    Timer,
    /// The user asked to abort.
    Abort,
}

/// Waits for the next arrival, the association's next timer or the user's abort.
async fn next(socks: &mut Sockets, timer: Option<Time>, o: &Options) -> Wake {
    let deadline = timer.map(|t| socks.instant(t));
    tokio::select! {
        a = socks.recv() => Wake::Packet(a),
        _ = async {
            match deadline {
                Some(d) => crate::io::sleep_precisely_until(d).await,
                None => std::future::pending().await,
            }
        } => Wake::Timer,
        _ = async {
            match &o.abort {
                Some(n) => n.notified().await,
                None => std::future::pending().await,
            }
        } => Wake::Abort,
    }
}

/// Aborts an established association: the ABORT goes out, the capture is written.
async fn abort(
    socks: &mut Sockets,
    assoc: &mut Association<Counters>,
    routes: &Routes,
    o: &Options,
) -> String {
    assoc.abort(socks.now(), None);
    let _ = flush(socks, assoc, routes).await;
    if let Err(e) = write_capture(socks, o) {
        return e;
    }
    "aborted: ABORT sent to the peer".into()
}

fn write_capture(socks: &Sockets, o: &Options) -> Result<(), String> {
    if let (Some(path), Some(bytes)) = (&o.pcap, socks.capture()) {
        std::fs::write(path, bytes)
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
    }
    Ok(())
}

/// Sends `data` from `locals` to `remotes`; returns when the association has closed.
pub async fn send(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    data: Bytes,
    o: &Options,
) -> Result<Report, String> {
    send_from(locals, remotes, Source::memory(data), o).await
}

/// Sends the file at `path`, read as the transfer goes: memory stays bounded whatever
/// the file's size.
pub async fn send_file(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    path: &Path,
    o: &Options,
) -> Result<Report, String> {
    send_from(locals, remotes, Source::file(path)?, o).await
}

/// Sends everything `src` yields, writing it into the association in pieces while less
/// than a window's worth is unacknowledged.
async fn send_from(
    locals: &[SocketAddr],
    remotes: &[SocketAddr],
    mut src: Source,
    o: &Options,
) -> Result<Report, String> {
    if locals.is_empty() || remotes.is_empty() {
        return Err("give at least one local and one remote address".into());
    }
    if locals.len() != remotes.len() {
        return Err(format!(
            "{} local and {} remote addresses: path i pairs local address i with remote \
             address i, so give as many of each",
            locals.len(),
            remotes.len()
        ));
    }
    let overhead = overhead_of(locals);
    o.validate_for(overhead)?;
    let mut socks = Sockets::bind(locals).await.map_err(|e| e.to_string())?;
    if o.pcap.is_some() {
        socks.start_capture();
    }
    let seed = rand::random();
    let mut conn = Connector::new(setup_config(o, &socks.local_addrs()), seed);
    let mut rejected = 0u64;
    let setup_deadline = o.deadline(Time::ZERO);
    let est = loop {
        let now = socks.now();
        if now >= setup_deadline {
            return Err(format!("no answer to INIT within {} s", o.timeout_s));
        }
        if let Some(p) = conn.poll_transmit(now) {
            socks
                .send(0, remotes[0], remotes[0].port(), &p)
                .await
                .map_err(|e| e.to_string())?;
        }
        match next(&mut socks, until(conn.poll_timeout(), setup_deadline), o).await {
            Wake::Packet(Arrival { packet: Ok(p), .. }) => match conn.handle_packet(&p) {
                Ok(Some(est)) => break est,
                Ok(None) => {}
                Err(e) => return Err(format!("setup failed: {e:?}")),
            },
            Wake::Packet(Arrival { packet: Err(_), .. }) => rejected += 1,
            Wake::Abort => return Err("aborted before the association was set up".into()),
            Wake::Timer => conn
                .handle_timeout(socks.now())
                .map_err(|e| format!("setup failed: {e:?}"))?,
        }
    };
    let n = locals.len().min(remotes.len());
    // The peer's SCTP port is the one we addressed the INIT to.
    let routes = Routes::new(
        locals.len(),
        (0..n).map(|i| (i, remotes[i])).collect(),
        remotes[0].port(),
    );
    let receiver_rates = negotiated_receiver_rates(o, &est);
    let confirm = est.peer_extensions.contains(&chunk_type::FILE_DIGEST);
    let mut digest = None;
    let (local_vtag, peer_vtag) = (est.init.local_vtag, est.init.peer_vtag);
    // Only the addresses we send to speak for the receiver until another answers a probe.
    let mut trust = Trust::new(remotes.iter().copied());
    let mut assoc = association(o, n, est.init, receiver_rates, overhead)?;
    for (i, c) in o.capacities.iter().enumerate().take(n) {
        assoc.set_destination_capacity(PathId(i), *c);
    }
    let start = socks.now();
    let total = src.len();
    // Unacknowledged bytes the sender keeps in memory: twice the receive buffer,
    // within 1–32 MiB; pieces are whole chunks, so no write leaves a short one.
    let window = (2 * o.rbuf as u64).clamp(1 << 20, 32 << 20);
    let piece = assoc.max_payload() as usize * 64;
    let mut ticker = Ticker::new();
    loop {
        while !src.is_done() && assoc.unacked_bytes() < window {
            match src.next_piece(piece) {
                Ok(b) => assoc.write(Payload::Bytes(b)),
                Err(e) => {
                    assoc.abort(socks.now(), Some(CAUSE_USER_INITIATED_ABORT));
                    let _ = flush(&mut socks, &mut assoc, &routes).await;
                    return Err(e);
                }
            }
        }
        if src.is_done() && assoc.unacked_bytes() == 0 {
            assoc.close();
        }
        let done = src.read() - assoc.unacked_bytes().min(src.read());
        ticker.tick(socks.now(), done, &assoc.observer().paths, o);
        flush(&mut socks, &mut assoc, &routes)
            .await
            .map_err(|e| e.to_string())?;
        if assoc.is_closed() {
            break;
        }
        if assoc.is_failed() {
            return Err(failure(&assoc));
        }
        if socks.now() >= o.deadline(start) {
            return Err(format!("transfer timed out after {} s", o.timeout_s));
        }
        let wake = until(ticker.wake(assoc.poll_timeout(), o), o.deadline(start));
        match next(&mut socks, wake, o).await {
            Wake::Packet(Arrival {
                local,
                from,
                packet: Ok(p),
                ..
            }) => {
                let now = socks.now();
                let admitted = if p.vtag == local_vtag {
                    admit(
                        &mut socks,
                        &mut trust,
                        (local, from),
                        p,
                        peer_vtag,
                        routes.peer_port,
                    )
                    .await
                } else {
                    vec![(local, p)] // the core counts and drops it
                };
                for (l, p) in admitted {
                    deliver(&mut assoc, now, routes.path_of(l), p);
                }
                if let Some(d) = assoc.take_extension_chunks().iter().find_map(parse_digest) {
                    digest = Some(d);
                }
            }
            Wake::Packet(Arrival { packet: Err(_), .. }) => rejected += 1,
            Wake::Timer => assoc.handle_timeout(socks.now()),
            Wake::Abort => return Err(abort(&mut socks, &mut assoc, &routes, o).await),
        }
    }
    let seconds = (socks.now().as_nanos() - start.as_nanos()) as f64 / 1e9;
    write_capture(&socks, o)?;
    if confirm {
        check_digest((total, &src.sha256()), digest)?;
    }
    Ok(Report {
        bytes: total,
        seconds,
        sha256: src.sha256(),
        confirmed: confirm,
        paths: assoc.observer().paths.clone(),
        rejected: rejected + assoc.stats().bad_vtag + trust.dropped,
        receiver_rates,
        routes: routes.addresses(&socks),
    })
}

/// Accepts one association on `listen`, writes what arrives to `out`, returns when the
/// peer has closed.
pub async fn receive(listen: &[SocketAddr], out: &Path, o: &Options) -> Result<Report, String> {
    if listen.is_empty() {
        return Err("give at least one address to listen on".into());
    }
    let socks = Sockets::bind(listen).await.map_err(|e| e.to_string())?;
    receive_on(socks, out, o).await
}

/// As [`receive`], on sockets already bound (tests bind port 0 and read the ports).
pub async fn receive_on(mut socks: Sockets, out: &Path, o: &Options) -> Result<Report, String> {
    let overhead = overhead_of(&socks.local_addrs());
    o.validate_for(overhead)?;
    // Where the data goes is checked before anyone connects; until the commit below the
    // destination keeps whatever it held.
    let mut sink = Sink::create(out)?;
    if o.pcap.is_some() {
        socks.start_capture();
    }
    let listen = socks.local_addrs();
    let key: [u8; 32] = rand::random();
    let mut listener = Listener::new(setup_config(o, &listen), key, rand::random());
    let mut rejected = 0u64;
    let setup_deadline = o.deadline(socks.now());
    let (est, arrived_on, from, peer_port, cookie_ack) = loop {
        let a = match next(&mut socks, Some(setup_deadline), o).await {
            Wake::Packet(a) => a,
            Wake::Timer => return Err(format!("no sender associated within {} s", o.timeout_s)),
            Wake::Abort => return Err("aborted before a peer connected".into()),
        };
        let Ok(p) = a.packet else {
            rejected += 1;
            continue;
        };
        if !o.peers.is_empty() && !o.peers.contains(&a.from.ip()) {
            rejected += 1;
            continue;
        }
        match listener.handle(socks.now(), &p) {
            ListenOutcome::Reply(r) => socks
                .send(a.local, a.from, a.src_port, &r)
                .await
                .map_err(|e| e.to_string())?,
            ListenOutcome::Established(est, ack) => break (est, a.local, a.from, a.src_port, ack),
            ListenOutcome::Drop(_) => rejected += 1,
        }
    };
    socks
        .send(arrived_on, from, peer_port, &cookie_ack)
        .await
        .map_err(|e| e.to_string())?;
    let mut routes = Routes::new(
        listen.len(),
        pair_remotes(&listen, arrived_on, from, &est.peer_addresses),
        peer_port,
    );
    let n = routes.paths.len();
    let local_vtag = est.init.local_vtag;
    let receiver_rates = negotiated_receiver_rates(o, &est);
    let confirm = est.peer_extensions.contains(&chunk_type::FILE_DIGEST);
    let peer_vtag = est.init.peer_vtag;
    // The handshake's source and the addresses the peer's INIT listed (at the same
    // port) speak for it; any other source must first answer a probe.
    let mut trust = Trust::new(
        std::iter::once(from).chain(
            est.peer_addresses
                .iter()
                .map(|ip| SocketAddr::new(*ip, from.port())),
        ),
    );
    let mut assoc = association(o, n, est.init, receiver_rates, overhead)?;
    let start = socks.now();
    let mut heard = start;
    let mut ticker = Ticker::new();
    let mut sha = None;
    loop {
        ticker.tick(socks.now(), sink.bytes(), &assoc.observer().paths, o);
        if let Err(e) = store(&mut assoc, &mut sink, &mut sha, confirm) {
            // The sender must not believe the file arrived: ABORT, "out of resource".
            assoc.abort(socks.now(), Some(CAUSE_OUT_OF_RESOURCE));
            let _ = flush(&mut socks, &mut assoc, &routes).await;
            return Err(e);
        }
        flush(&mut socks, &mut assoc, &routes)
            .await
            .map_err(|e| e.to_string())?;
        if assoc.is_closed() {
            break;
        }
        if assoc.is_failed() {
            return Err(failure(&assoc));
        }
        if socks.now() >= o.deadline(start) {
            return Err(format!("transfer timed out after {} s", o.timeout_s));
        }
        let silent_until = Time::from_nanos(
            heard
                .as_nanos()
                .saturating_add((o.peer_silence_s * 1e9) as u64),
        );
        if socks.now() >= silent_until {
            return Err(format!(
                "the sender went silent: nothing from it for {} s",
                o.peer_silence_s
            ));
        }
        let wake = until(
            ticker.wake(assoc.poll_timeout(), o),
            o.deadline(start).min(silent_until),
        );
        match next(&mut socks, wake, o).await {
            Wake::Packet(Arrival {
                local,
                from,
                packet: Ok(p),
                ..
            }) => {
                // Our COOKIE ACK got lost: answer the repeated COOKIE ECHO again.
                if p.vtag == local_vtag
                    && trust.is_confirmed(from)
                    && matches!(p.chunks.first(), Some(Chunk::CookieEcho { .. }))
                {
                    socks
                        .send(local, from, routes.peer_port, &cookie_ack)
                        .await
                        .map_err(|e| e.to_string())?;
                    continue;
                }
                if p.vtag != local_vtag {
                    // The core counts and drops a packet under another tag.
                    deliver(&mut assoc, socks.now(), routes.path_of(local), p);
                    continue;
                }
                let now = socks.now();
                for (l, p) in admit(
                    &mut socks,
                    &mut trust,
                    (local, from),
                    p,
                    peer_vtag,
                    routes.peer_port,
                )
                .await
                {
                    routes.latch(l, from);
                    heard = now;
                    deliver(&mut assoc, now, routes.path_of(l), p);
                }
            }
            Wake::Packet(Arrival { packet: Err(_), .. }) => rejected += 1,
            Wake::Timer => assoc.handle_timeout(socks.now()),
            Wake::Abort => return Err(abort(&mut socks, &mut assoc, &routes, o).await),
        }
    }
    let seconds = (socks.now().as_nanos() - start.as_nanos()) as f64 / 1e9;
    write_capture(&socks, o)?;
    let sha256 = sha.ok_or("the association closed before the peer's SHUTDOWN")?;
    Ok(Report {
        bytes: sink.bytes(),
        seconds,
        sha256,
        confirmed: confirm,
        paths: assoc.observer().paths.clone(),
        rejected: rejected + assoc.stats().bad_vtag + trust.dropped,
        receiver_rates,
        routes: routes.addresses(&socks),
    })
}

/// The FILE-DIGEST chunk: 8 bytes of length (big-endian) and the 32-byte SHA-256.
fn digest_chunk(len: u64, sha_hex: &str) -> Chunk {
    let mut value = len.to_be_bytes().to_vec();
    value.extend(
        (0..sha_hex.len() / 2)
            .filter_map(|i| u8::from_str_radix(&sha_hex[2 * i..2 * i + 2], 16).ok()),
    );
    Chunk::Unknown {
        chunk_type: chunk_type::FILE_DIGEST,
        flags: 0,
        value: value.into(),
    }
}

/// Length and SHA-256 (hex) of a FILE-DIGEST chunk, if well formed.
fn parse_digest(c: &Chunk) -> Option<(u64, String)> {
    match c {
        Chunk::Unknown {
            chunk_type: chunk_type::FILE_DIGEST,
            value,
            ..
        } if value.len() == 40 => {
            let len = u64::from_be_bytes(value[..8].try_into().ok()?);
            Some((len, hex(&value[8..])))
        }
        _ => None,
    }
}

/// Whether the receiver's digest confirms what was sent; the error says what differs.
fn check_digest(sent: (u64, &str), got: Option<(u64, String)>) -> Result<(), String> {
    match got {
        None => {
            Err("the receiver closed without confirming what it stored (no FILE-DIGEST)".into())
        }
        Some((len, sha)) if len == sent.0 && sha == sent.1 => Ok(()),
        Some((len, sha)) => Err(format!(
            "the receiver stored {len} bytes with SHA-256 {sha}; {} bytes with {} were sent",
            sent.0, sent.1
        )),
    }
}

/// Moves delivered data into the sink; once the peer has asked to shut down (so every
/// byte has arrived) and before our SHUTDOWN ACK goes out, commits the file durably.
fn store(
    assoc: &mut Association<Counters>,
    sink: &mut Sink,
    sha: &mut Option<String>,
    confirm: bool,
) -> Result<(), String> {
    while let Some(p) = assoc.read() {
        if let Payload::Bytes(b) = p {
            sink.write(&b)?;
        }
    }
    if sha.is_none() && assoc.closing() == Closing::Received {
        let digest = sink.commit()?;
        if confirm {
            assoc.bundle_with_shutdown_ack(digest_chunk(sink.bytes(), &digest));
        }
        *sha = Some(digest);
    }
    Ok(())
}

/// Passes a packet under the association's tag through the source check: the packets
/// to deliver now (a confirmed source's, or those held for a source that just answered
/// its probe); a probe goes to a new source. Rejections are counted in `trust.dropped`.
async fn admit(
    socks: &mut Sockets,
    trust: &mut Trust,
    (local, from): (usize, SocketAddr),
    p: Packet,
    peer_vtag: u32,
    peer_port: u16,
) -> Vec<(usize, Packet)> {
    let out = trust.on_packet(local, from, p, socks.now());
    if let Some(probe) = out.probe {
        let probe = Packet {
            vtag: peer_vtag,
            chunks: vec![probe],
        };
        // A failing send is a lost probe; the next packet from there probes again.
        let _ = socks.send(local, from, peer_port, &probe).await;
    }
    out.deliver
}

/// Hands a packet to the association, counting DATA arrivals per path.
fn deliver(assoc: &mut Association<Counters>, now: Time, path: PathId, p: Packet) {
    if p.chunks.iter().any(|c| matches!(c, Chunk::Data(_))) {
        assoc.observer_mut().path(path).received_data_packets += 1;
    }
    assoc.handle_packet(now, path, p)
}

/// Why a failed association failed, for the user.
fn failure(assoc: &Association<Counters>) -> String {
    if assoc.peer_aborted() {
        match assoc.peer_abort_cause() {
            Some(CAUSE_OUT_OF_RESOURCE) => {
                "the peer aborted the association: out of resource (the receiver could not store the data)".into()
            }
            Some(CAUSE_USER_INITIATED_ABORT) => {
                "the peer aborted the association (user-initiated)".into()
            }
            Some(c) => format!("the peer aborted the association (error cause {c})"),
            None => "the peer aborted the association".into(),
        }
    } else {
        "the association failed: the peer stopped answering".into()
    }
}

/// The paths of an accepted association, as (local socket index, remote address).
/// Path 0 is the handshake's: the local address the INIT arrived on and the INIT's
/// source (RFC 9260 §5.1.2: the source is one of the peer's addresses even when the
/// INIT does not list it). Every other local address, in order, takes the listed peer
/// address that shares the longest prefix with it (a WiFi address pairs with the
/// peer's address on the same network; ties go to the peer's order), on the port the
/// peer's packets came from. Locals left without a peer address of their family carry
/// no path.
pub fn pair_remotes(
    locals: &[SocketAddr],
    arrived_on: usize,
    from: SocketAddr,
    peer: &[IpAddr],
) -> Vec<(usize, SocketAddr)> {
    let mut free: Vec<IpAddr> = peer.iter().copied().filter(|a| *a != from.ip()).collect();
    let mut out = vec![(arrived_on, from)];
    for (i, l) in locals.iter().enumerate() {
        if i == arrived_on {
            continue;
        }
        let best = (0..free.len())
            .filter(|&j| free[j].is_ipv4() == l.is_ipv4())
            .max_by_key(|&j| (common_prefix(l.ip(), free[j]), usize::MAX - j));
        if let Some(j) = best {
            out.push((i, SocketAddr::new(free.remove(j), from.port())));
        }
    }
    out
}

/// Leading bits two addresses share (0 across address families).
fn common_prefix(a: IpAddr, b: IpAddr) -> u32 {
    match (a, b) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u32::from(a) ^ u32::from(b)).leading_zeros(),
        (IpAddr::V6(a), IpAddr::V6(b)) => (u128::from(a) ^ u128::from(b)).leading_zeros(),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sa(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }
    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn the_handshake_pair_is_path_zero_and_other_locals_pair_by_network() {
        let locals = [sa("10.1.0.1:9"), sa("10.2.0.1:9"), sa("10.3.0.1:9")];
        // The INIT came to our second address from the peer's 10.2 address; the peer
        // lists its addresses in another order than ours.
        let peer = [ip("10.3.0.2"), ip("10.2.0.2"), ip("10.1.0.2")];
        let got = pair_remotes(&locals, 1, sa("10.2.0.2:7"), &peer);
        assert_eq!(
            got,
            vec![
                (1, sa("10.2.0.2:7")),
                (0, sa("10.1.0.2:7")),
                (2, sa("10.3.0.2:7"))
            ]
        );
    }

    #[test]
    fn an_unlisted_source_still_makes_a_path_and_spare_locals_carry_none() {
        let locals = [sa("10.1.0.1:9"), sa("10.2.0.1:9")];
        let got = pair_remotes(&locals, 1, sa("192.0.2.7:7"), &[]);
        assert_eq!(got, vec![(1, sa("192.0.2.7:7"))]);
        let routes = Routes::new(2, got, 7);
        assert_eq!(routes.path_of(1), PathId(0));
        assert_eq!(
            routes.path_of(0),
            PathId(0),
            "a spare socket reports to path 0"
        );
    }

    #[test]
    fn a_path_follows_the_address_its_packets_come_from() {
        let locals = [sa("127.0.0.1:9"), sa("127.0.0.2:9")];
        let peer = [ip("127.0.1.1"), ip("127.0.1.2")];
        // Behind relays: the INIT came from relay 0's address, not a listed one.
        let mut routes = Routes::new(2, pair_remotes(&locals, 0, sa("127.0.0.1:4000"), &peer), 7);
        routes.latch(1, sa("127.0.0.1:4001"));
        assert_eq!(
            routes.paths,
            vec![(0, sa("127.0.0.1:4000")), (1, sa("127.0.0.1:4001"))]
        );
        // A spare socket (no path) changes nothing.
        let mut one = Routes::new(2, vec![(1, sa("127.0.0.1:4001"))], 7);
        one.latch(0, sa("127.0.0.9:1"));
        assert_eq!(one.paths, vec![(1, sa("127.0.0.1:4001"))]);
    }

    #[test]
    fn a_file_digest_round_trips_and_any_difference_is_named() {
        let sha = "ab".repeat(32);
        let c = digest_chunk(1234, &sha);
        assert_eq!(parse_digest(&c), Some((1234, sha.clone())));
        assert!(check_digest((1234, &sha), parse_digest(&c)).is_ok());
        let e = check_digest((1235, &sha), parse_digest(&c)).unwrap_err();
        assert!(
            e.contains("stored 1234 bytes") && e.contains("1235 bytes"),
            "{e}"
        );
        let other = "cd".repeat(32);
        let e = check_digest((1234, &other), parse_digest(&c)).unwrap_err();
        assert!(e.contains(&sha) && e.contains(&other), "{e}");
        let e = check_digest((1234, &sha), None).unwrap_err();
        assert!(e.contains("without confirming"), "{e}");
    }
}
