//! Building a simulation from a validated scenario: both directions of every link with
//! the values drawn for this run, the routes, the background sources and the endpoints.
//! Every random value comes from a stream named after its component, so the order of
//! these steps does not matter.

use std::cell::RefCell;
use std::rc::Rc;

use cmt_core::{Algorithms, AssocInit, Association, Duration, PathId, Time};
use rand::Rng;

use super::endpoint::Endpoint;
use super::packets::Pkt;
use super::{configured_loss, path_capacity, Drawn, Simulation};
use crate::ids::{EndpointId, FlowId, LinkDir, RouteId};
use crate::link::{Link, LinkParams, LinkStreams, LossPoint};
use crate::loss::LossChain;
use crate::queue::EventQueue;
use crate::recorder::{Probe, Recorder, Role};
use crate::rng::stream;
use crate::scenario::{Built, BuiltLink};
use crate::traffic::Source;
use crate::units::Spread;

/// Open-loop sources (with their route) per background flow, `None` for TCP-like ones.
type Sources = Vec<Option<(Source, RouteId)>>;

impl Simulation {
    /// Builds links, draws per-run values and creates both endpoints.
    pub fn new(built: Built) -> Result<Self, String> {
        // A failure left by an earlier run on this thread that nobody took is not ours.
        let _ = cmt_core::extension_failure::take();
        let (links, drawn) = build_links(&built);
        let start_params = links.iter().map(|l| l.params().clone()).collect();
        let mut routes = path_routes(&built);
        let (sources, tcp_flows) = background(&built, &mut routes);
        let rec = Rc::new(RefCell::new(Recorder::new(
            built.paths.len(),
            built.bin,
            built.config.initial_cwnd(),
        )));
        rec.borrow_mut().flows = vec![Default::default(); built.traffic.len()];
        let metered = built.paths.iter().any(|p| p.radio.is_some());
        if metered {
            rec.borrow_mut().radios = Some(crate::recorder::Radios {
                meters: built
                    .paths
                    .iter()
                    .map(|p| p.radio.clone().map(crate::energy::RadioMeter::new))
                    .collect(),
            });
        }
        let mut ends = main_endpoints(&built, &drawn, &rec)?;
        let flow_sender = tcp_endpoints(&built, &tcp_flows, &rec, &mut ends)?;
        let radio_side = metered.then(|| built.device.endpoint());
        let apps = app_states(&built);
        Ok(Simulation {
            radio_side,
            built,
            now: Time::ZERO,
            q: EventQueue::default(),
            pipes: (0..links.len()).map(|_| Default::default()).collect(),
            packets: Default::default(),
            links,
            routes,
            ends,
            capture: None,
            flow_sender,
            rec,
            events: 0,
            drawn,
            start_params,
            ending: None,
            failure: None,
            apps,
            sources,
        })
    }
}

/// Every application-limited flow's state, with its own random stream.
fn app_states(built: &Built) -> Vec<Option<crate::app::AppState>> {
    built
        .traffic
        .iter()
        .map(|t| {
            t.app.clone().map(|model| crate::app::AppState {
                model,
                player: Default::default(),
                rng: stream(built.seed, &format!("traffic/{}/app", t.name)),
                target: 0,
                started: None,
                size: 0,
            })
        })
        .collect()
}

fn draw<T: Copy + rand::distributions::uniform::SampleUniform + PartialOrd>(
    s: Spread<T>,
    rng: &mut impl Rng,
) -> T {
    match s {
        Spread::Fixed(v) => v,
        Spread::Uniform(lo, hi) if lo < hi => rng.gen_range(lo..=hi),
        Spread::Uniform(lo, _) => lo,
    }
}

/// Both directions of every link (link `l` is directions `2l` forward and `2l + 1`
/// back), and the values drawn for each.
fn build_links(built: &Built) -> (Vec<Link<Pkt>>, Vec<Drawn>) {
    let mut links = Vec::with_capacity(2 * built.links.len());
    let mut drawn = Vec::with_capacity(built.links.len());
    for l in &built.links {
        // ns-2.35 drops lost packets before the queue; the profile follows it.
        let default_loss_at = match built.config.compat {
            cmt_core::Compat::Ns2 => LossPoint::Entry,
            cmt_core::Compat::Rfc => LossPoint::Exit,
        };
        let (pair, d) = link_directions(l, built.seed, l.loss_at.unwrap_or(default_loss_at));
        links.extend(pair);
        drawn.push(d);
    }
    (links, drawn)
}

/// The propagation delay (ns) and Bernoulli loss that a run with `seed` draws for link
/// `l` (each a fixed value or drawn uniformly from its range, once per run, from the
/// link's own stream): what the simulator runs, and what a real run of the same
/// scenario and seed must build.
pub fn draw_link(l: &BuiltLink, seed: u64) -> (u64, f64) {
    let mut rng = stream(seed, &format!("link/{}/draw", l.name));
    let delay_ns = draw(
        match l.delay {
            Spread::Fixed(d) => Spread::Fixed(d.as_nanos()),
            Spread::Uniform(a, b) => Spread::Uniform(a.as_nanos(), b.as_nanos()),
        },
        &mut rng,
    );
    (delay_ns, draw(l.loss, &mut rng))
}

/// One duplex link: its per-run draws (delay, Bernoulli loss) and its two directions,
/// each with its own loss and jitter streams.
fn link_directions(l: &BuiltLink, seed: u64, loss_at: LossPoint) -> ([Link<Pkt>; 2], Drawn) {
    let (delay_ns, loss) = draw_link(l, seed);
    let drawn = Drawn {
        link: l.name.clone(),
        delay_ms: delay_ns as f64 * 1e-6,
        loss,
    };
    let params = LinkParams {
        trace: l.trace.clone(),
        rate_bps: l.rate_bps,
        delay: Duration::from_nanos(delay_ns),
        jitter: l.jitter,
        jitter_half: l.jitter_half,
        queue: l.queue,
        reorder: l.reorder,
        loss_at,
        aqm: l.aqm,
    };
    let direction = |dir: &str| {
        let mut params = params.clone();
        if let (Some(rate), "rev") = (l.reverse_rate_bps, dir) {
            params.trace = None;
            params.rate_bps = rate;
        }
        let chain = if l.loss_direction.applies(dir == "rev") {
            LossChain::new(loss, l.gilbert)
                .with_model(l.loss_model.as_ref().map(|m| m.factory.build()))
        } else {
            LossChain::new(0.0, None)
        };
        Link::new(
            format!("{}/{dir}", l.name),
            params,
            chain,
            LinkStreams {
                loss: stream(seed, &format!("link/{}/{dir}/loss", l.name)),
                jitter: stream(seed, &format!("link/{}/{dir}/jitter", l.name)),
                queue: stream(seed, &format!("link/{}/{dir}/queue", l.name)),
            },
        )
    };
    ([direction("fwd"), direction("rev")], drawn)
}

/// Route `2p` is path `p` from sender to receiver, `2p + 1` the way back.
fn path_routes(built: &Built) -> Vec<Vec<LinkDir>> {
    built
        .paths
        .iter()
        .flat_map(|p| {
            let fwd = p.links.iter().map(|&l| LinkDir(2 * l)).collect();
            let rev = p.links.iter().rev().map(|&l| LinkDir(2 * l + 1)).collect();
            [fwd, rev]
        })
        .collect()
}

/// The background flows: an open-loop source with its route, or for a closed-loop flow
/// two routes per path, forward and back in turn (returned as `(flow, its first
/// forward route)`), appended to `routes`.
fn background(built: &Built, routes: &mut Vec<Vec<LinkDir>>) -> (Sources, Vec<(FlowId, RouteId)>) {
    let seed = built.seed;
    let mut sources = Vec::with_capacity(built.traffic.len());
    let mut tcp_flows = Vec::new();
    for (f, t) in built.traffic.iter().enumerate() {
        let route: Vec<LinkDir> = t.route.iter().map(|&l| LinkDir(l)).collect();
        if t.tcp {
            tcp_flows.push((FlowId(f), RouteId(routes.len())));
            for path in &t.paths {
                let fwd: Vec<LinkDir> = path.iter().map(|&l| LinkDir(l)).collect();
                let back = fwd.iter().rev().map(|l| l.reverse()).collect();
                routes.extend([fwd, back]);
            }
            sources.push(None);
            continue;
        }
        let rate = draw(
            t.rate_bps,
            &mut stream(seed, &format!("traffic/{}/draw", t.name)),
        );
        let stop = t.stop.map_or(Time::MAX, |d| Time::ZERO + d);
        let src = Source::new(
            t.pattern,
            t.sizes,
            rate,
            stop,
            stream(seed, &format!("traffic/{}", t.name)),
        );
        sources.push(Some((src, RouteId(routes.len()))));
        routes.push(route);
    }
    (sources, tcp_flows)
}

/// Endpoints 0 (sender) and 1 (receiver) of the association under study; the sender
/// learns each path's capacity, and with the oracle its configured loss.
fn main_endpoints(
    built: &Built,
    drawn: &[Drawn],
    rec: &Rc<RefCell<Recorder>>,
) -> Result<Vec<Endpoint>, String> {
    let n = built.paths.len();
    let cfg = built.config.clone();
    let mut init_rng = stream(built.seed, "association/init");
    let (ia, ib) = AssocInit::pair(init_rng.gen(), cfg.rbuf, cfg.rbuf);
    let algs = || Algorithms {
        scheduler: built.scheduler.build(n),
        rtx: built.rtx.build(),
        cc: built.cc.as_ref(),
    };
    let probe = |role| Probe::new(rec.clone(), role);
    let mut sender = Association::new(cfg.clone(), n, algs(), ia, probe(Role::Sender))?;
    for (p, path) in built.paths.iter().enumerate() {
        sender.set_destination_capacity(PathId(p), path_capacity(built, &path.links));
        sender.set_backup(PathId(p), path.backup);
        if !path.present {
            sender.remove_path(Time::ZERO, PathId(p));
        }
    }
    if built.oracle_loss {
        for (p, path) in built.paths.iter().enumerate() {
            let loss = configured_loss(built, drawn, &path.links);
            sender.set_destination_loss_rate(PathId(p), Some(loss));
        }
    }
    let mut receiver = Association::new(cfg, n, algs(), ib, probe(Role::Receiver))?;
    // Paths that come and go are told to the receiver (RFC 5061, `world::churn`): an
    // absent path's address is unknown to it until the sender's ADD-IP.
    let churn =
        built.paths.iter().any(|p| !p.present) || built.events.iter().any(|e| e.path.is_some());
    if churn {
        sender.enable_reconfiguration();
        receiver.enable_reconfiguration();
        for p in (0..n).filter(|&p| !built.paths[p].present) {
            receiver.remove_path(Time::ZERO, PathId(p));
        }
    }
    Ok(vec![
        Endpoint::new(
            sender,
            (0..n).map(|p| RouteId(2 * p)).collect(),
            EndpointId::RECEIVER,
            None,
        ),
        Endpoint::new(
            receiver,
            (0..n).map(|p| RouteId(2 * p + 1)).collect(),
            EndpointId::SENDER,
            None,
        ),
    ])
}

/// Both ends of every closed-loop flow (its paths, scheduler and congestion control,
/// window, MTU and ack frequency; a TCP-like flow has one path), appended to `ends`;
/// returns each flow's sender endpoint.
fn tcp_endpoints(
    built: &Built,
    tcp_flows: &[(FlowId, RouteId)],
    rec: &Rc<RefCell<Recorder>>,
    ends: &mut Vec<Endpoint>,
) -> Result<Vec<Option<EndpointId>>, String> {
    let mut flow_sender = vec![None; built.traffic.len()];
    for &(f, fwd) in tcp_flows {
        let t = &built.traffic[f.0];
        let tcp_cfg = cmt_core::Config {
            rbuf: t.window,
            mtu: t.mtu,
            sack_freq: t.ack_every,
            ecn: t.ecn,
            ..cmt_core::Config::default()
        };
        let (ia, ib) = AssocInit::pair(
            stream(built.seed, &format!("traffic/{}/init", t.name)).gen(),
            t.window,
            t.window,
        );
        let params = cmt_core::params::Params::default();
        let cc = cmt_core::cc::by_name(&t.cc, &params).map_err(|e| e.0)?;
        let sched = cmt_core::sched::by_name(&t.scheduler, &params).map_err(|e| e.0)?;
        let n = t.paths.len();
        let mk = |init, role| {
            let algs = Algorithms {
                scheduler: sched.build(n),
                rtx: cmt_core::rtx::RtxFactory::build(&cmt_core::rtx::RtxSameFactory::default()),
                cc: cc.as_ref(),
            };
            Association::new(
                tcp_cfg.clone(),
                n,
                algs,
                init,
                Probe::new(rec.clone(), role),
            )
        };
        let (s_end, r_end) = (EndpointId(ends.len()), EndpointId(ends.len() + 1));
        let mut sender = mk(ia, Role::FlowSender(f.0))?;
        for (p, path) in t.paths.iter().enumerate() {
            let links: Vec<usize> = path.iter().map(|&l| l / 2).collect();
            sender.set_destination_capacity(PathId(p), path_capacity(built, &links));
        }
        let receiver = mk(ib, Role::FlowReceiver(f.0))?;
        let route = |k: usize| RouteId(fwd.0 + k);
        let (out, back) = (
            (0..n).map(|p| route(2 * p)),
            (0..n).map(|p| route(2 * p + 1)),
        );
        ends.push(Endpoint::new(sender, out.collect(), r_end, Some(f)));
        ends.push(Endpoint::new(receiver, back.collect(), s_end, Some(f)));
        flow_sender[f.0] = Some(s_end);
    }
    Ok(flow_sender)
}
