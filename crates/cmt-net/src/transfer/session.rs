//! The machinery both ends share: the association, the wait for the next event, sending
//! what the core has, admitting arrivals through the source check, aborting.

use std::net::SocketAddr;

use cmt_core::auth::AuthConfig;
use cmt_core::cc;
use cmt_core::params::Params;
use cmt_core::rev::RevConfig;
use cmt_core::rtx;
use cmt_core::sched;
use cmt_core::setup::{
    Established, SetupConfig, CAUSE_OUT_OF_RESOURCE, CAUSE_USER_INITIATED_ABORT,
};
use cmt_core::wire::chunk_type;
use cmt_core::{Algorithms, Association, Chunk, Config, Packet, PathId, Time};

use super::{error::TransferError, options::Options, report::Counters, routes::Routes};
use crate::ifwatch::{link, AddrWatch};
use crate::io::{Arrival, Sockets};
use crate::trust::Trust;
use cmt_sim::packet_trace::PacketTrace;

/// The earlier of an optional timer and a deadline.
pub(super) fn until(timer: Option<Time>, deadline: Time) -> Option<Time> {
    Some(timer.map_or(deadline, |t| t.min(deadline)))
}

/// Whether both ends announced the receiver-driven chunk types.
pub(super) fn negotiated_receiver_rates(o: &Options, est: &Established) -> bool {
    o.receiver_rates
        && [chunk_type::ROUND_INFO, chunk_type::RATE_ADVERT]
            .iter()
            .all(|t| est.peer_extensions.contains(t))
}

/// The association of a transfer over `paths` paths, with the options' algorithms;
/// `receiver_rates` as negotiated. It begins `now`: its timers (the outage tolerance
/// above all) run from its own start, not from when the process or the server started.
pub(super) fn association(
    o: &Options,
    paths: usize,
    mut init: cmt_core::AssocInit,
    receiver_rates: bool,
    overhead: u32,
    now: Time,
) -> Result<Association<Counters>, String> {
    init.start = now;
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
        rto_min: o.timers().1,
        outage: Some(o.timers().0),
        ..Config::default()
    };
    let algs = Algorithms {
        scheduler: sched.build(paths),
        rtx: rtx.build(),
        cc: cc.as_ref(),
    };
    Association::new(cfg, paths, algs, init, Counters::default())
}

pub(super) fn setup_config(o: &Options, locals: &[SocketAddr]) -> SetupConfig {
    let mut extensions = vec![chunk_type::FILE_DIGEST];
    if o.receiver_rates {
        extensions.splice(0..0, [chunk_type::ROUND_INFO, chunk_type::RATE_ADVERT]);
    }
    let mut auth = o.auth.clone();
    if o.reconfigure {
        extensions.extend([chunk_type::ASCONF, chunk_type::ASCONF_ACK]);
        // RFC 5061 §4.1.1: no reconfiguration without authentication.
        auth.get_or_insert_with(AuthConfig::for_reconfiguration);
    }
    // A sender's INIT padded so that no INIT ACK is larger (within the path MTU): a
    // serving receiver answers it whatever a spoofed flood did to its reply budget, and
    // a crowd behind one address at the speed of its handshakes (docs/runtime.md).
    let room = o.mtu.saturating_sub(super::options::overhead_of(locals)) as usize;
    SetupConfig {
        rbuf: o.rbuf,
        addresses: locals.iter().map(|a| a.ip()).collect(),
        extensions,
        auth,
        pad_init_to: cmt_core::setup::INIT_PADDED_LEN.min(room),
        ..SetupConfig::default()
    }
}

/// Whether the peer confirms files (FILE-DIGEST both ways). A peer that cannot is
/// refused with an ABORT unless [`Options::allow_unconfirmed`] says otherwise.
pub(super) async fn confirms(
    socks: &mut Sockets,
    routes: &Routes,
    est: &Established,
    o: &Options,
) -> Result<bool, TransferError> {
    if est.peer_extensions.contains(&chunk_type::FILE_DIGEST) {
        return Ok(true);
    }
    if o.allow_unconfirmed {
        return Ok(false);
    }
    Err(refuse(
        socks,
        routes,
        est,
        "the peer cannot confirm the file (no FILE-DIGEST support: not a cmtlab peer); \
         --allow-unconfirmed transfers without that check",
    )
    .await)
}

/// Ends an association just set up, before any data: an ABORT ("User-Initiated Abort")
/// tells the peer, and `why` is the setup's error.
pub(super) async fn refuse(
    socks: &mut Sockets,
    routes: &Routes,
    est: &Established,
    why: &str,
) -> TransferError {
    let abort = Packet {
        vtag: est.init.peer_vtag,
        chunks: vec![Chunk::Abort {
            cause: Some(CAUSE_USER_INITIATED_ABORT),
            reflected: false,
        }],
    };
    let (local, remote) = routes.paths[0];
    let _ = socks.send(local, remote, routes.peer_port, &abort).await;
    TransferError::Setup(why.to_string())
}

/// Sends every transmit the association has now, in as few system calls as the
/// kernel allows (consecutive packets for one path leave in one GSO batch).
pub(super) async fn flush(
    socks: &mut Sockets,
    assoc: &mut Association<Counters>,
    routes: &Routes,
) -> std::io::Result<()> {
    queue_transmits(socks, assoc, routes);
    // A failing interface is a lost packet to the protocol, not the end of the
    // transfer: the other paths carry on.
    let _ = socks.send_queued().await;
    Ok(())
}

/// Queues every transmit the association has now.
fn queue_transmits(socks: &mut Sockets, assoc: &mut Association<Counters>, routes: &Routes) {
    let now = socks.now();
    while let Some(t) = assoc.poll_transmit(now) {
        let (local, remote) = routes.paths[t.path.0.min(routes.paths.len() - 1)];
        socks.queue(local, remote, routes.peer_port, &t.packet);
    }
}

/// Progress reports at most every 250 ms.
pub(super) struct Ticker {
    every: Time,
    next: Time,
}

impl Ticker {
    pub(super) fn new() -> Self {
        Ticker {
            every: Time::from_nanos(250_000_000),
            next: Time::ZERO,
        }
    }
    /// The sooner of `timer` and the next report (when reporting).
    pub(super) fn wake(&self, timer: Option<Time>, o: &Options) -> Option<Time> {
        match (timer, o.progress.is_some()) {
            (Some(t), true) => Some(t.min(self.next)),
            (None, true) => Some(self.next),
            (t, false) => t,
        }
    }
    /// Reports progress when a report is due: `done` bytes, and each path's counters
    /// with its round-trip times.
    pub(super) fn tick(
        &mut self,
        now: Time,
        done: u64,
        assoc: &mut Association<Counters>,
        o: &Options,
    ) {
        if let Some(f) = o.progress {
            if now >= self.next {
                super::report::note_rtts(assoc);
                f(done, &assoc.observer().paths);
                self.next = Time::from_nanos(now.as_nanos() + self.every.as_nanos());
            }
        }
    }
}

/// What ended a wait.
pub(super) enum Wake {
    /// A datagram arrived.
    Packet(Arrival),
    /// The timer asked for expired.
    Timer,
    /// The user asked to abort.
    Abort,
    /// The watched interfaces' addresses may have changed.
    Interfaces,
    /// The application has more data to move.
    Input,
}

/// Waits for the next arrival, the association's next timer, the user's abort, — with
/// a `watch` — a change of the watched interfaces, or — with an `input` — more data
/// from the application.
pub(super) async fn next(
    socks: &mut Sockets,
    timer: Option<Time>,
    o: &Options,
    watch: Option<&mut AddrWatch>,
    input: Option<&tokio::sync::Notify>,
) -> Wake {
    let deadline = timer.map(|t| socks.instant(t));
    tokio::select! {
        _ = async {
            match watch {
                Some(w) => w.changed().await,
                None => std::future::pending().await,
            }
        } => Wake::Interfaces,
        a = socks.recv() => Wake::Packet(a),
        _ = async {
            match input {
                Some(n) => n.notified().await,
                None => std::future::pending().await,
            }
        } => Wake::Input,
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

/// Aborts an established association at the user's request (a signal): the ABORT
/// goes out with cause "User-Initiated Abort", the capture is closed (its error, if
/// writing it failed).
pub(super) async fn abort(
    socks: &mut Sockets,
    assoc: &mut Association<Counters>,
    routes: &Routes,
) -> Result<(), String> {
    assoc.abort(socks.now(), Some(CAUSE_USER_INITIATED_ABORT));
    let _ = flush(socks, assoc, routes).await;
    socks.finish_capture()
}

/// Sends what the core has, then checks how the association stands: `Ok(true)` once it
/// has closed, an error when it failed or the transfer's time limit (from `start`) has
/// passed — then an ABORT tells the peer.
///
/// While datagrams of the last receive call remain to be handled, what is queued may
/// wait for them ([`Sockets::can_defer_sends`]): the next call sends it with theirs.
/// Nothing is left queued when the loop may block (no datagram is buffered then) or
/// when this returns anything but `Ok(false)`.
pub(super) async fn flush_and_check(
    socks: &mut Sockets,
    assoc: &mut Association<Counters>,
    routes: &Routes,
    o: &Options,
    start: Time,
) -> Result<bool, String> {
    queue_transmits(socks, assoc, routes);
    let ends = assoc.is_closed() || assoc.is_failed() || socks.now() >= o.deadline(start);
    if ends || !socks.can_defer_sends() {
        // A failing interface is a lost packet to the protocol (see `flush`).
        let _ = socks.send_queued().await;
    }
    if assoc.is_closed() {
        return Ok(true);
    }
    if assoc.is_failed() {
        return Err(failure(assoc));
    }
    if socks.now() >= o.deadline(start) {
        let why = format!("transfer timed out after {} s", o.timeout_s);
        return Err(give_up(socks, assoc, routes, why).await);
    }
    Ok(false)
}

/// Gives up on an established association for a local reason (a time limit): an ABORT
/// with cause "User-Initiated Abort" tells the peer at once, and `why` is returned.
async fn give_up(
    socks: &mut Sockets,
    assoc: &mut Association<Counters>,
    routes: &Routes,
    why: String,
) -> String {
    assoc.abort(socks.now(), Some(CAUSE_USER_INITIATED_ABORT));
    let _ = flush(socks, assoc, routes).await;
    why
}

/// Opens the outputs that must exist before a peer is involved (`--pcap`, `--trace`),
/// so that a path that cannot be written fails at once: the capture starts now, the
/// trace is returned for [`start_trace`] once the paths are known.
pub(super) fn open_outputs(
    socks: &mut Sockets,
    o: &Options,
) -> Result<Option<PacketTrace>, String> {
    if let Some(p) = &o.pcap {
        socks.start_capture(p)?;
    }
    o.trace
        .as_ref()
        .map(|file| PacketTrace::create(file, Vec::new()))
        .transpose()
}

/// Passes a packet under the association's tag through the source check: the packets
/// to deliver now (a confirmed source's, or those held for a source that just answered
/// its probe); a probe goes to a new source. Rejections are counted in `trust.dropped`.
pub(super) async fn admit(
    socks: &mut Sockets,
    trust: &mut Trust,
    (local, from, authenticated): (usize, SocketAddr, bool),
    p: Packet,
    peer_vtag: u32,
    peer_port: u16,
) -> Vec<(usize, Packet)> {
    let out = trust.on_packet(local, from, p, socks.now(), authenticated);
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

/// Hands a packet to the association, counting DATA arrivals per path (and tracing a
/// SACK's arrival at the sender).
pub(super) fn deliver(assoc: &mut Association<Counters>, now: Time, path: PathId, p: Packet) {
    let mut data = None;
    for c in &p.chunks {
        if let Chunk::Data(d) = c {
            *data.get_or_insert(0) += d.payload.len() as u64;
        }
    }
    if let Some(bytes) = data {
        let counts = assoc.observer_mut().path(path);
        counts.received_data_packets += 1;
        counts.received_bytes += bytes;
    }
    if let Some((t, true)) = &mut assoc.observer_mut().trace {
        t.sender_received(now, path, &p);
    }
    assoc.handle_packet(now, path, p)
}

/// Starts the per-packet trace of this end (opened by [`open_outputs`]); paths are
/// named `local>remote`.
pub(super) fn start_trace(
    assoc: &mut Association<Counters>,
    trace: Option<PacketTrace>,
    routes: &[(SocketAddr, SocketAddr)],
    sender: bool,
) {
    let Some(mut t) = trace else {
        return;
    };
    t.set_path_names(routes.iter().map(|(l, r)| format!("{l}>{r}")).collect());
    if sender {
        let n = assoc.num_paths();
        t.set_cwnds((0..n).map(|i| assoc.path(PathId(i)).cwnd));
    }
    assoc.observer_mut().trace = Some((t, sender));
}

/// Closes the per-packet trace, if any.
pub(super) fn finish_trace(assoc: &mut Association<Counters>, o: &Options) -> Result<(), String> {
    match (&mut assoc.observer_mut().trace, &o.trace) {
        (Some((t, _)), Some(file)) => t
            .finish()
            .map(|_| ())
            .map_err(|e| format!("--trace {}: cannot write: {e}", file.display())),
        _ => Ok(()),
    }
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
    } else if assoc.peer_silent() {
        let s = assoc
            .config()
            .outage
            .map_or(0, |o| o.tolerance.as_secs_f64() as u64);
        format!(
            "nothing came from the peer on any path for {s} s (the outage tolerance): \
             it is gone or every path is down"
        )
    } else if assoc.peer_violated() {
        "the peer violated the protocol (it acknowledged data never sent, for one): \
         ABORT sent"
            .into()
    } else {
        "the association failed: the peer stopped answering".into()
    }
}

/// Watches the interfaces the local sockets were named by (`Options::interfaces`), each
/// with the address socket i is bound to (`bound[i]`; `None` for an interface without
/// one yet): those sockets follow their interface (`Established::follow_interfaces`).
/// Sockets from `spare` on are given to interfaces that appear, when the options ask
/// for adoption.
pub(super) fn watch_interfaces(
    o: &Options,
    bound: &[Option<std::net::IpAddr>],
    spare: usize,
) -> AddrWatch {
    let watched = o
        .interfaces
        .iter()
        .zip(bound)
        .enumerate()
        .filter_map(|(i, (name, &ip))| Some((i, name.clone()?, ip)))
        .collect();
    let adopt = match &o.adopt {
        Some(exclude) => crate::ifwatch::Adopt {
            free: (spare..bound.len()).collect(),
            exclude: exclude.clone(),
        },
        None => crate::ifwatch::Adopt::default(),
    };
    let ifaces = if_addrs::get_if_addrs().unwrap_or_default();
    let links = (0..bound.len())
        .filter_map(|i| {
            let name = o.interfaces.get(i).cloned().flatten();
            let name = name.or_else(|| bound[i].and_then(|ip| link::interface_of(&ifaces, ip)));
            Some((i, name?))
        })
        .collect();
    AddrWatch::adopting(watched, adopt).with_links(links)
}
