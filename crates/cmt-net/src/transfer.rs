//! Moving one file over several UDP paths: the sender connects (INIT … COOKIE ACK),
//! writes the file, closes gracefully when everything is acknowledged; the receiver
//! listens, accepts one association, writes what arrives in order to a file and returns
//! when the peer has shut down. Path i pairs local address i with remote address i.

use std::net::SocketAddr;
use std::path::Path;

use bytes::Bytes;
use cmt_core::cc;
use cmt_core::params::Params;
use cmt_core::rtx;
use cmt_core::sched;
use cmt_core::setup::{Connector, ListenOutcome, Listener, SetupConfig};
use cmt_core::{
    Algorithms, Association, Chunk, Config, Event, Observer, PathId, Payload, SendKind, Time,
};
use sha2::{Digest, Sha256};

use crate::io::{Arrival, Sockets};

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
    /// Write every datagram sent and received to this pcap file.
    pub pcap: Option<std::path::PathBuf>,
    /// Called about every 250 ms with the bytes done so far and the per-path counters.
    pub progress: Option<fn(u64, &[PathCount])>,
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
            pcap: None,
            progress: None,
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
}

/// The observer of a runtime association.
#[derive(Clone, Debug, Default)]
pub struct Counters {
    /// Per path.
    pub paths: Vec<PathCount>,
    /// Bytes delivered in order.
    pub delivered: u64,
}

impl Observer for Counters {
    fn event(&mut self, _now: Time, e: &Event) {
        match *e {
            Event::DataSent {
                path, bytes, kind, ..
            } => {
                if self.paths.len() <= path.0 {
                    self.paths.resize(path.0 + 1, PathCount::default());
                }
                let p = &mut self.paths[path.0];
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
}

impl Report {
    /// Goodput in Mbit/s.
    pub fn goodput_mbps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.seconds.max(1e-9) / 1e6
    }
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The association of a transfer over `paths` paths, with the options' algorithms.
fn association(
    o: &Options,
    paths: usize,
    init: cmt_core::AssocInit,
) -> Result<Association<Counters>, String> {
    let p = Params::default();
    let sched = sched::by_name(&o.scheduler, &p).map_err(|e| e.0)?;
    let rtx = rtx::by_name(&o.rtx, &p).map_err(|e| e.0)?;
    let cc = cc::by_name(&o.cc, &p).map_err(|e| e.0)?;
    let cfg = Config {
        mtu: o.mtu,
        ip_header_len: crate::IPV4_UDP_OVERHEAD,
        rbuf: o.rbuf,
        confirm_paths: true,
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
        ..SetupConfig::default()
    }
}

/// Sends every transmit the association has now.
async fn flush(
    socks: &mut Sockets,
    assoc: &mut Association<Counters>,
    remotes: &[SocketAddr],
) -> std::io::Result<()> {
    let now = socks.now();
    while let Some(t) = assoc.poll_transmit(now) {
        let i = t.path.0.min(remotes.len() - 1);
        // A failing interface is a lost packet to the protocol, not the end of the
        // transfer: the other paths carry on.
        let _ = socks.send(i, remotes[i], &t.packet).await;
    }
    Ok(())
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

/// Waits for the next arrival or the association's next timer.
async fn next(socks: &mut Sockets, timer: Option<Time>) -> Option<Arrival> {
    let deadline = timer.map(|t| socks.instant(t));
    let got = tokio::select! {
        a = socks.rx.recv() => a,
        _ = async {
            match deadline {
                Some(d) => crate::io::sleep_precisely_until(d).await,
                None => std::future::pending().await,
            }
        } => None,
    };
    if let Some(a) = &got {
        socks.record_arrival(a);
    }
    got
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
    if locals.is_empty() || remotes.is_empty() {
        return Err("give at least one local and one remote address".into());
    }
    let mut socks = Sockets::bind(locals).await.map_err(|e| e.to_string())?;
    if o.pcap.is_some() {
        socks.start_capture();
    }
    let seed = rand::random();
    let mut conn = Connector::new(setup_config(o, &socks.local_addrs()), seed);
    let mut rejected = 0u64;
    let est = loop {
        let now = socks.now();
        if now.as_nanos() as f64 > o.timeout_s * 1e9 {
            return Err("no answer to INIT".into());
        }
        if let Some(p) = conn.poll_transmit(now) {
            socks
                .send(0, remotes[0], &p)
                .await
                .map_err(|e| e.to_string())?;
        }
        match next(&mut socks, conn.poll_timeout()).await {
            Some(Arrival { packet: Ok(p), .. }) => match conn.handle_packet(&p) {
                Ok(Some(est)) => break est,
                Ok(None) => {}
                Err(e) => return Err(format!("setup failed: {e:?}")),
            },
            Some(Arrival { packet: Err(_), .. }) => rejected += 1,
            None => conn
                .handle_timeout(socks.now())
                .map_err(|e| format!("setup failed: {e:?}"))?,
        }
    };
    let n = locals.len().min(remotes.len());
    let mut assoc = association(o, n, est.init)?;
    let start = socks.now();
    let sha = hex(&Sha256::digest(&data));
    let total = data.len() as u64;
    assoc.write(Payload::Bytes(data));
    let mut ticker = Ticker::new();
    loop {
        if assoc.unacked_bytes() == 0 {
            assoc.close();
        }
        let done = total - assoc.unacked_bytes().min(total);
        ticker.tick(socks.now(), done, &assoc.observer().paths, o);
        flush(&mut socks, &mut assoc, remotes)
            .await
            .map_err(|e| e.to_string())?;
        if assoc.is_closed() {
            break;
        }
        if assoc.is_failed() {
            return Err("the association failed".into());
        }
        if (socks.now().as_nanos() - start.as_nanos()) as f64 > o.timeout_s * 1e9 {
            return Err("transfer timed out".into());
        }
        match next(&mut socks, ticker.wake(assoc.poll_timeout(), o)).await {
            Some(Arrival {
                local,
                packet: Ok(p),
                ..
            }) => assoc.handle_packet(socks.now(), PathId(local.min(n - 1)), p),
            Some(Arrival { packet: Err(_), .. }) => rejected += 1,
            None => assoc.handle_timeout(socks.now()),
        }
    }
    let seconds = (socks.now().as_nanos() - start.as_nanos()) as f64 / 1e9;
    write_capture(&socks, o)?;
    Ok(Report {
        bytes: total,
        seconds,
        sha256: sha,
        paths: assoc.observer().paths.clone(),
        rejected: rejected + assoc.stats().bad_vtag,
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
    if o.pcap.is_some() {
        socks.start_capture();
    }
    let listen = socks.local_addrs();
    let key: [u8; 32] = rand::random();
    let mut listener = Listener::new(setup_config(o, &socks.local_addrs()), key, rand::random());
    let mut rejected = 0u64;
    let (est, from, cookie_ack) = loop {
        let Some(a) = next(&mut socks, None).await else {
            return Err("sockets closed".into());
        };
        let Ok(p) = a.packet else {
            rejected += 1;
            continue;
        };
        match listener.handle(socks.now(), &p) {
            ListenOutcome::Reply(r) => socks
                .send(a.local, a.from, &r)
                .await
                .map_err(|e| e.to_string())?,
            ListenOutcome::Established(est, ack) => break (est, a.from, ack),
            ListenOutcome::Drop(_) => rejected += 1,
        }
    };
    socks
        .send(0, from, &cookie_ack)
        .await
        .map_err(|e| e.to_string())?;
    // Remote address i: the peer's address i on the port its packets came from.
    let mut remotes: Vec<SocketAddr> = est
        .peer_addresses
        .iter()
        .map(|ip| SocketAddr::new(*ip, from.port()))
        .collect();
    if remotes.is_empty() {
        remotes.push(from);
    }
    let n = listen.len().min(remotes.len());
    remotes.truncate(n);
    let local_vtag = est.init.local_vtag;
    let mut assoc = association(o, n, est.init)?;
    let mut file = Vec::new();
    let start = socks.now();
    let mut ticker = Ticker::new();
    loop {
        ticker.tick(socks.now(), file.len() as u64, &assoc.observer().paths, o);
        flush(&mut socks, &mut assoc, &remotes)
            .await
            .map_err(|e| e.to_string())?;
        while let Some(p) = assoc.read() {
            if let Payload::Bytes(b) = p {
                file.extend_from_slice(&b);
            }
        }
        if assoc.is_closed() {
            break;
        }
        if assoc.is_failed() {
            return Err("the association failed".into());
        }
        match next(&mut socks, ticker.wake(assoc.poll_timeout(), o)).await {
            Some(Arrival {
                local,
                from,
                packet: Ok(p),
                ..
            }) => {
                // Our COOKIE ACK got lost: answer the repeated COOKIE ECHO again.
                if p.vtag == local_vtag
                    && matches!(p.chunks.first(), Some(Chunk::CookieEcho { .. }))
                {
                    socks
                        .send(local, from, &cookie_ack)
                        .await
                        .map_err(|e| e.to_string())?;
                    continue;
                }
                assoc.handle_packet(socks.now(), PathId(local.min(n - 1)), p)
            }
            Some(Arrival { packet: Err(_), .. }) => rejected += 1,
            None => assoc.handle_timeout(socks.now()),
        }
    }
    let seconds = (socks.now().as_nanos() - start.as_nanos()) as f64 / 1e9;
    std::fs::write(out, &file).map_err(|e| format!("{}: cannot write: {e}", out.display()))?;
    write_capture(&socks, o)?;
    Ok(Report {
        bytes: file.len() as u64,
        seconds,
        sha256: hex(&Sha256::digest(&file)),
        paths: assoc.observer().paths.clone(),
        rejected: rejected + assoc.stats().bad_vtag,
    })
}
