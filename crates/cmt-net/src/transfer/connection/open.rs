//! Opening a [`Connection`] once the handshake is done, the same for every role:
//! the association with the options' algorithms and what the peer agreed to (receiver-
//! driven rates, RFC 5061 reconfiguration with its spare path slots), the paths that
//! start removed, the trace, the interface watch and the addresses the peer knows. What
//! differs between the ends is what they hand over in an [`Opening`].

use std::net::{IpAddr, SocketAddr};

use cmt_core::rev::RevConfig;
use cmt_core::setup::Established as SetupDone;
use cmt_core::wire::chunk_type;
use cmt_core::{cc, rtx, sched};
use cmt_core::{Algorithms, Association, Config, PathId, Time};
use cmt_sim::packet_trace::PacketTrace;

use super::addresses::Addresses;
use super::reconfig::{self, SPARE_PATHS};
use super::Connection;
use crate::ifwatch::{link, AddrWatch};
use crate::io::Sockets;
use crate::transfer::error::TransferError;
use crate::transfer::options::Options;
use crate::transfer::report::Counters;
use crate::transfer::routes::Routes;
use crate::trust::Trust;

/// What one end knows when its handshake is done.
pub(in crate::transfer) struct Opening {
    /// The handshake's outcome.
    pub(in crate::transfer) est: SetupDone,
    /// Which local socket and remote address each path uses (one path per entry).
    pub(in crate::transfer) routes: Routes,
    /// The sources that speak for the peer from the start.
    pub(in crate::transfer) trust: Trust,
    /// Datagrams refused during the handshake.
    pub(in crate::transfer) rejected: u64,
    /// Bytes of IP, UDP, SCTP common and SCTP-AUTH header in every packet.
    pub(in crate::transfer) overhead: u32,
    /// Paths whose interface has no address yet: they start removed (the sender's
    /// `--local` interfaces; none at a receiver).
    pub(in crate::transfer) absent: Vec<bool>,
    /// Per local socket, the address it is bound to (`None`: its interface has none
    /// yet), and how many sockets the interface watch may fill.
    pub(in crate::transfer) bound: (Vec<Option<IpAddr>>, usize),
    /// Our addresses the peer learned in the handshake.
    pub(in crate::transfer) announced: Vec<IpAddr>,
    /// The sending end (its trace records the windows).
    pub(in crate::transfer) sender: bool,
}

impl Connection {
    /// The connection of the association `op` describes, for every role.
    pub(in crate::transfer) fn open(
        socks: &Sockets,
        o: &Options,
        op: Opening,
        trace: Option<PacketTrace>,
    ) -> Result<Connection, TransferError> {
        let Opening { est, routes, .. } = op;
        let n = routes.paths.len();
        let receiver_rates = negotiated_receiver_rates(o, &est);
        let est_arrivals = est.peer_extensions.contains(&chunk_type::ARRIVALS);
        let reconfigure = reconfig::negotiated(o, &est);
        // Slots for addresses the peer adds later, removed until then.
        let spare = if reconfigure { SPARE_PATHS } else { 0 };
        let (local_vtag, peer_vtag) = (est.init.local_vtag, est.init.peer_vtag);
        let start = socks.now();
        let mut assoc = association(o, n + spare, est.init, receiver_rates, op.overhead, start)
            .map_err(TransferError::Setup)?;
        if reconfigure {
            assoc.enable_reconfiguration();
        }
        let absent = (0..n).filter(|&i| op.absent.get(i).copied().unwrap_or(false));
        for i in absent.chain(n..n + spare) {
            assoc.remove_path(start, PathId(i));
        }
        start_trace(&mut assoc, trace, &routes.addresses(socks), op.sender);
        let (bound, slots) = op.bound;
        Ok(Connection {
            assoc,
            routes,
            trust: op.trust,
            local_vtag,
            peer_vtag,
            rejected: op.rejected,
            start,
            watch: watch_interfaces(o, &bound, slots),
            addrs: Addresses::new(op.announced),
            receiver_rates,
            ce: false,
            arrivals: (!op.sender && est_arrivals)
                .then(|| crate::transfer::arrivals::Recorder::new(socks.local_addrs())),
        })
    }
}

/// Whether both ends announced the receiver-driven chunk types.
fn negotiated_receiver_rates(o: &Options, est: &SetupDone) -> bool {
    o.receiver_rates
        && [chunk_type::ROUND_INFO, chunk_type::RATE_ADVERT]
            .iter()
            .all(|t| est.peer_extensions.contains(t))
}

/// The association of a transfer over `paths` paths, with the options' algorithms;
/// `receiver_rates` as negotiated. It begins `now`: its timers (the outage tolerance
/// above all) run from its own start, not from when the process or the server started.
fn association(
    o: &Options,
    paths: usize,
    mut init: cmt_core::AssocInit,
    receiver_rates: bool,
    overhead: u32,
    now: Time,
) -> Result<Association<Counters>, String> {
    init.start = now;
    let none = cmt_sim::AlgorithmParams::default();
    let p = o.exact.as_ref().map_or(&none, |e| &e.params);
    let sched = sched::by_name(&o.scheduler, &p.scheduler).map_err(|e| e.0)?;
    let rtx = rtx::by_name(&o.rtx, &p.rtx).map_err(|e| e.0)?;
    // Without rate adverts the receiver-driven allowance has nothing to follow.
    let cc_name = match o.cc.as_str() {
        "receiver" if !receiver_rates => "reno",
        name => name,
    };
    let cc = cc::by_name(cc_name, &p.cc).map_err(|e| e.0)?;
    let cfg = match &o.exact {
        Some(e) => Config {
            mtu: o.mtu,
            ip_header_len: overhead,
            rbuf: o.rbuf,
            confirm_paths: true,
            rev: receiver_rates.then(|| e.config.rev.unwrap_or_default()),
            sack_immediately: true,
            ..e.config.clone()
        },
        None => runtime_config(o, receiver_rates, overhead),
    };
    let algs = Algorithms {
        scheduler: sched.build(paths),
        rtx: rtx.build(),
        cc: cc.as_ref(),
    };
    Association::new(cfg, paths, algs, init, Counters::default())
}

/// The runtime's own configuration from its options.
fn runtime_config(o: &Options, receiver_rates: bool, overhead: u32) -> Config {
    let mut cfg = Config {
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
        ecn: o.ecn,
        recovery: o.recovery,
        reinject: o.reinject,
        send_buffer: o.send_buffer,
        prr: o.prr,
        // The close waits for the SACK of the last chunk: ask for it at once (RFC 7053).
        sack_immediately: true,
        ..Config::default()
    };
    if let Some(name) = &o.preset {
        // The runtime keeps its own RTO.Min (`--rto-min`).
        cmt_core::preset::apply(name, &mut cfg, |k| k == cmt_core::preset::Key::RtoMin);
    }
    cfg
}

/// Starts the per-packet trace of this end (opened by [`open_outputs`]); paths are
/// named `local>remote`.
fn start_trace(
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

/// Watches the interfaces the local sockets were named by (`Options::interfaces`), each
/// with the address socket i is bound to (`bound[i]`; `None` for an interface without
/// one yet): those sockets follow their interface ([`Connection::follow_interfaces`]).
/// Sockets from `spare` on are given to interfaces that appear, when the options ask
/// for adoption.
fn watch_interfaces(o: &Options, bound: &[Option<std::net::IpAddr>], spare: usize) -> AddrWatch {
    let watched = o
        .interfaces
        .iter()
        .zip(bound)
        .enumerate()
        .filter_map(|(i, (name, &ip))| Some((i, name.clone()?, ip)))
        .collect();
    let adopt = match &o.send.adopt {
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
