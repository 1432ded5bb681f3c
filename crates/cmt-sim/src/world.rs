//! The simulation: the association under study (endpoints 0 and 1), the endpoints of
//! TCP-like background flows, open-loop sources, the links between them, and the event
//! loop that moves packets and fires timers in `(time, seq)` order.

use std::cell::RefCell;
use std::rc::Rc;

use cmt_core::{Algorithms, AssocInit, Association, Duration, PathId, Payload, Time};
use rand::Rng;

use crate::link::{DropCause, Finished, InFlight, Link, LinkParams, Offer};
use crate::loss::LossChain;
use crate::queue::EventQueue;
use crate::recorder::{Probe, Recorder, Role};
use crate::rng::stream;
use crate::scenario::{Built, Workload};
use crate::traffic::Source;
use crate::units::Spread;

mod bounds;

enum Ev {
    LinkDone(usize),
    Arrive(usize, InFlight),
    Timer(usize),
    LinkEvent(usize),
    Traffic(usize),
    End,
}

/// Values drawn once per run for one duplex link (docs/algorithms.md §11.1, §12), for the record.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Drawn {
    /// Link name.
    pub link: String,
    /// Propagation delay, ms.
    pub delay_ms: f64,
    /// Bernoulli loss probability.
    pub loss: f64,
}

/// A path's configured forward loss: every link's drawn Bernoulli loss, Gilbert
/// stationary loss and named model's mean loss in series (docs/algorithms.md §1.5 "oracle").
fn configured_loss(built: &Built, drawn: &[Drawn], links: &[usize]) -> f64 {
    forward_loss(built, drawn, links, LossMeasure::Packets)
}

/// What [`forward_loss`] adds up per link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LossMeasure {
    /// The long-run fraction of packets lost.
    Packets,
    /// The rate at which loss episodes begin (a burst counted once).
    Episodes,
}

/// A path's forward loss in series over its links: each link's drawn Bernoulli loss,
/// its Gilbert model and its named loss model, measured by `measure` (a probability per
/// packet).
fn forward_loss(built: &Built, drawn: &[Drawn], links: &[usize], measure: LossMeasure) -> f64 {
    let pass: f64 = links
        .iter()
        .map(|&l| {
            let link = &built.links[l];
            if !link.loss_direction.applies(false) {
                return 1.0;
            }
            let (g, m) = match measure {
                LossMeasure::Packets => (
                    link.gilbert.as_ref().map_or(0.0, |g| g.stationary_loss()),
                    link.loss_model
                        .as_ref()
                        .map_or(0.0, |m| m.factory.mean_loss()),
                ),
                LossMeasure::Episodes => (
                    link.gilbert.as_ref().map_or(0.0, |g| g.episode_rate()),
                    link.loss_model
                        .as_ref()
                        .map_or(0.0, |m| m.factory.episode_rate()),
                ),
            };
            (1.0 - drawn[l].loss) * (1.0 - g) * (1.0 - m)
        })
        .product();
    1.0 - pass
}

/// A path's capacity in bytes/s: its slowest forward link's configured rate; `None`
/// when a link follows a capacity trace.
fn path_capacity(built: &Built, links: &[usize]) -> Option<f64> {
    links
        .iter()
        .map(|&l| {
            let b = &built.links[l];
            (b.trace.is_none() && b.rate_bps > 0).then_some(b.rate_bps as f64 / 8.0)
        })
        .try_fold(f64::INFINITY, |m, r| r.map(|r| m.min(r)))
}

/// How a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The configured duration elapsed.
    DurationElapsed,
    /// The whole file was delivered.
    FileDelivered,
    /// The file transfer hit its time limit.
    TimeLimit,
    /// The association failed.
    AssociationFailed,
}

/// A runnable simulation built from a scenario.
pub struct Simulation {
    pub(crate) built: Built,
    now: Time,
    q: EventQueue<Ev>,
    links: Vec<Link>,
    /// Link chains: route 2p is path p sender → receiver, 2p + 1 the way back;
    /// background flows follow.
    routes: Vec<Vec<usize>>,
    /// Endpoints: 0 and 1 the association under study, then sender and receiver of
    /// each TCP-like flow.
    ends: Vec<Association<Probe>>,
    timer_at: Vec<Option<Time>>,
    /// pcap capture of the association under study.
    capture: Option<crate::capture::Capture>,
    /// Per endpoint: the route of each of its paths.
    end_routes: Vec<Vec<usize>>,
    /// Per endpoint: the endpoint it talks to.
    peer: Vec<usize>,
    /// Per endpoint: the background flow it belongs to.
    end_flow: Vec<Option<usize>>,
    /// Per background flow: its TCP sender endpoint.
    flow_sender: Vec<Option<usize>>,
    pub(crate) rec: Rc<RefCell<Recorder>>,
    pub(crate) events: u64,
    pub(crate) drawn: Vec<Drawn>,
    pub(crate) ending: Option<Ending>,
    /// Per background flow: the open-loop source and its route (`None` for TCP flows).
    pub(crate) sources: Vec<Option<(Source, usize)>>,
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

impl Simulation {
    /// Builds links, draws per-run values and creates both endpoints.
    pub fn new(built: Built) -> Result<Self, String> {
        let seed = built.seed;
        let mut links = Vec::with_capacity(2 * built.links.len());
        let mut drawn = Vec::with_capacity(built.links.len());
        for l in &built.links {
            let mut rng = stream(seed, &format!("link/{}/draw", l.name));
            let delay_ns = draw(
                match l.delay {
                    Spread::Fixed(d) => Spread::Fixed(d.as_nanos()),
                    Spread::Uniform(a, b) => Spread::Uniform(a.as_nanos(), b.as_nanos()),
                },
                &mut rng,
            );
            let loss = draw(l.loss, &mut rng);
            drawn.push(Drawn {
                link: l.name.clone(),
                delay_ms: delay_ns as f64 * 1e-6,
                loss,
            });
            let params = LinkParams {
                trace: l.trace.clone(),
                rate_bps: l.rate_bps,
                delay: Duration::from_nanos(delay_ns),
                jitter: l.jitter,
                jitter_half: l.jitter_half,
                queue: l.queue,
                reorder: l.reorder,
            };
            for dir in ["fwd", "rev"] {
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
                links.push(Link::new(
                    format!("{}/{dir}", l.name),
                    params,
                    chain,
                    stream(seed, &format!("link/{}/{dir}/loss", l.name)),
                    stream(seed, &format!("link/{}/{dir}/jitter", l.name)),
                ));
            }
        }
        let routes: Vec<Vec<usize>> = built
            .paths
            .iter()
            .flat_map(|p| {
                let fwd = p.links.iter().map(|&l| 2 * l).collect();
                let rev = p.links.iter().rev().map(|&l| 2 * l + 1).collect();
                [fwd, rev]
            })
            .collect();
        let mut routes = routes;
        let mut sources = Vec::with_capacity(built.traffic.len());
        let mut tcp_flows = Vec::new();
        for (f, t) in built.traffic.iter().enumerate() {
            if t.tcp {
                let fwd = routes.len();
                routes.push(t.route.clone());
                routes.push(t.route.iter().rev().map(|&l| l ^ 1).collect());
                tcp_flows.push((f, fwd));
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
            sources.push(Some((src, routes.len())));
            routes.push(t.route.clone());
        }
        let n = built.paths.len();
        let cfg = built.config.clone();
        let rec = Rc::new(RefCell::new(Recorder::new(
            n,
            built.bin,
            cfg.initial_cwnd(),
        )));
        rec.borrow_mut().flows = vec![Default::default(); built.traffic.len()];
        let mut init_rng = stream(seed, "association/init");
        let (ia, ib) = AssocInit::pair(init_rng.gen(), cfg.rbuf, cfg.rbuf);
        fn algs(b: &Built, n: usize) -> Algorithms<'_> {
            Algorithms {
                scheduler: b.scheduler.build(n),
                rtx: b.rtx.build(),
                cc: b.cc.as_ref(),
            }
        }
        let sender = Association::new(
            cfg.clone(),
            n,
            algs(&built, n),
            ia,
            Probe::new(rec.clone(), Role::Sender),
        )?;
        let mut sender = sender;
        for (p, path) in built.paths.iter().enumerate() {
            sender.set_destination_capacity(PathId(p), path_capacity(&built, &path.links));
        }
        if built.oracle_loss {
            for (p, path) in built.paths.iter().enumerate() {
                sender.set_destination_loss_rate(
                    PathId(p),
                    Some(configured_loss(&built, &drawn, &path.links)),
                );
            }
        }
        let receiver = Association::new(
            cfg,
            n,
            algs(&built, n),
            ib,
            Probe::new(rec.clone(), Role::Receiver),
        )?;
        let mut ends = vec![sender, receiver];
        let mut end_routes: Vec<Vec<usize>> = vec![
            (0..n).map(|p| 2 * p).collect(),
            (0..n).map(|p| 2 * p + 1).collect(),
        ];
        let mut peer = vec![1, 0];
        let mut end_flow = vec![None, None];
        let mut flow_sender = vec![None; built.traffic.len()];
        for (f, fwd) in tcp_flows {
            let t = &built.traffic[f];
            let tcp_cfg = cmt_core::Config {
                rbuf: t.window,
                mtu: t.mtu,
                sack_freq: t.ack_every,
                ..cmt_core::Config::default()
            };
            let (ia, ib) = AssocInit::pair(
                stream(seed, &format!("traffic/{}/init", t.name)).gen(),
                t.window,
                t.window,
            );
            let reno = cmt_core::cc::RenoFactory;
            let mk = |init, role| {
                let algs = Algorithms {
                    scheduler: cmt_core::sched::SchedulerFactory::build(
                        &cmt_core::sched::RoundRobinFactory,
                        1,
                    ),
                    rtx: cmt_core::rtx::RtxFactory::build(&cmt_core::rtx::RtxSameFactory::default()),
                    cc: &reno,
                };
                Association::new(
                    tcp_cfg.clone(),
                    1,
                    algs,
                    init,
                    Probe::new(rec.clone(), role),
                )
            };
            let s_end = ends.len();
            ends.push(mk(ia, Role::FlowSender(f))?);
            ends.push(mk(ib, Role::FlowReceiver(f))?);
            end_routes.push(vec![fwd]);
            end_routes.push(vec![fwd + 1]);
            peer.extend([s_end + 1, s_end]);
            end_flow.extend([Some(f), Some(f)]);
            flow_sender[f] = Some(s_end);
        }
        let timer_at = vec![None; ends.len()];
        Ok(Simulation {
            built,
            now: Time::ZERO,
            q: EventQueue::default(),
            links,
            routes,
            ends,
            timer_at,
            capture: None,
            end_routes,
            peer,
            end_flow,
            flow_sender,
            rec,
            events: 0,
            drawn,
            ending: None,
            sources,
        })
    }

    /// Runs to the end. `progress` gets the fraction of simulated time done now and then.
    pub fn run(&mut self, progress: &mut dyn FnMut(f64)) -> Ending {
        let (end, file) = match self.built.workload {
            Workload::Timed(d) => (Time::ZERO + d, None),
            Workload::File { bytes, limit } => (Time::ZERO + limit, Some(bytes)),
        };
        match file {
            None => self.ends[0].write_backlog(),
            Some(mut bytes) => {
                while bytes > 0 {
                    let part = bytes.min(u32::MAX as u64 / 2);
                    self.ends[0].write(Payload::Synthetic(part as u32));
                    bytes -= part;
                }
            }
        }
        self.q.push(end, Ev::End);
        for (i, e) in self.built.events.iter().enumerate() {
            self.q.push(Time::ZERO + e.at, Ev::LinkEvent(i));
        }
        for (i, t) in self.built.traffic.iter().enumerate() {
            self.q.push(Time::ZERO + t.start, Ev::Traffic(i));
        }
        self.flush(0);
        self.flush(1);
        let span = end.as_nanos().max(1) as f64;
        while let Some((at, ev)) = self.q.pop() {
            self.now = at;
            self.events += 1;
            if self.events & 0xffff == 0 {
                progress(at.as_nanos() as f64 / span);
            }
            match ev {
                Ev::End => {
                    self.ending = Some(if file.is_some() {
                        Ending::TimeLimit
                    } else {
                        Ending::DurationElapsed
                    });
                    break;
                }
                Ev::LinkDone(l) => self.link_done(l),
                Ev::Traffic(f) => match self.flow_sender[f] {
                    Some(e) => {
                        self.ends[e].write_backlog();
                        self.flush(e);
                    }
                    None => self.emit_background(f),
                },
                Ev::LinkEvent(i) => {
                    let e = self.built.events[i].clone();
                    for &l in &e.links {
                        for pkt in self.links[l].change(&e.change) {
                            self.dropped(&pkt, DropCause::Down, l);
                        }
                    }
                }
                Ev::Arrive(l, pkt) => self.arrive(l, pkt),
                Ev::Timer(side) => {
                    if self.timer_at[side] == Some(at) {
                        self.timer_at[side] = None;
                        self.ends[side].handle_timeout(at);
                        self.flush(side);
                    }
                }
            }
            if let Some(bytes) = file {
                if self.rec.borrow().delivered >= bytes {
                    self.ending = Some(Ending::FileDelivered);
                    break;
                }
            }
            if self.ends[0].is_failed() {
                self.ending = Some(Ending::AssociationFailed);
                break;
            }
        }
        self.rec.borrow_mut().finish(self.now);
        progress(1.0);
        self.ending.unwrap_or(Ending::DurationElapsed)
    }

    /// Captures every packet of the association under study to `out` as pcap (call
    /// before [`run`](Self::run); [`finish_capture`](Self::finish_capture) after).
    pub fn capture_to(&mut self, out: Box<dyn std::io::Write>) -> std::io::Result<()> {
        self.capture = Some(crate::capture::Capture::new(out)?);
        Ok(())
    }

    /// Writes a per-packet trace of the association to `file` (CSV, or Parquet for a
    /// `.parquet` name; columns in [`crate::packet_trace`]); call before
    /// [`run`](Self::run), and [`finish_trace`](Self::finish_trace) after.
    pub fn trace_to(&mut self, file: &std::path::Path) -> Result<(), String> {
        let names = self.built.paths.iter().map(|p| p.name.clone()).collect();
        let mut t = crate::packet_trace::PacketTrace::create(file, names)?;
        let n = self.ends[0].num_paths();
        t.set_cwnds((0..n).map(|i| self.ends[0].path(PathId(i)).cwnd));
        self.rec.borrow_mut().trace = Some(t);
        Ok(())
    }

    /// Closes the per-packet trace; returns the rows written (0 without a trace).
    pub fn finish_trace(&mut self) -> std::io::Result<u64> {
        match self.rec.borrow_mut().trace.as_mut() {
            Some(t) => t.finish(),
            None => Ok(0),
        }
    }

    /// Flushes the capture; returns the packets written.
    pub fn finish_capture(&mut self) -> std::io::Result<u64> {
        match self.capture.as_mut() {
            Some(c) => c.finish().map(|()| c.packets),
            None => Ok(0),
        }
    }

    /// Simulated time now.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The CMT sender's protocol counters (retransmission decisions, refused choices).
    pub fn sender_stats(&self) -> cmt_core::AssocStats {
        self.ends[0].stats().clone()
    }

    /// The metrics recorded so far (time-series bins, per-path totals).
    pub fn recorder(&self) -> std::cell::Ref<'_, Recorder> {
        self.rec.borrow()
    }

    fn link_done(&mut self, l: usize) {
        let (fate, next) = self.links[l].finish(self.now);
        match fate {
            Some(Finished::Arrives(at, pkt)) => self.q.push(at, Ev::Arrive(l, pkt)),
            Some(Finished::Lost(pkt, cause)) => self.dropped(&pkt, cause, l),
            None => {}
        }
        if let Some(t) = next {
            self.q.push(t, Ev::LinkDone(l));
        }
    }

    fn dropped(&mut self, pkt: &InFlight, cause: DropCause, link: usize) {
        if let (None, Some(packet)) = (pkt.flow, &pkt.packet) {
            if let Some(t) = self.rec.borrow_mut().trace.as_mut() {
                let name = &self.links[link].name;
                t.network_drop(self.now, PathId(pkt.path), packet, cause.as_str(), name);
            }
        }
        match pkt.flow {
            Some(f) if pkt.packet.is_none() || pkt.data => {
                self.rec.borrow_mut().flows[f].lost_packets += 1
            }
            Some(_) => {}
            None if pkt.data && pkt.dest == 1 => self.rec.borrow_mut().on_data_drop(pkt.path),
            None => {}
        }
    }

    fn emit_background(&mut self, f: usize) {
        let Some((src, route)) = &mut self.sources[f] else {
            return;
        };
        let route = *route;
        let (size, next) = src.emit(self.now);
        if let Some(t) = next {
            self.q.push(t, Ev::Traffic(f));
        }
        {
            let mut rec = self.rec.borrow_mut();
            rec.flows[f].sent_packets += 1;
            rec.flows[f].sent_bytes += size as u64;
        }
        let pkt = InFlight {
            packet: None,
            route,
            path: 0,
            dest: usize::MAX,
            flow: Some(f),
            hop: 0,
            size,
            sent_at: self.now,
            data: false,
        };
        self.offer(pkt);
    }

    fn offer(&mut self, mut pkt: InFlight) {
        let l = self.routes[pkt.route][pkt.hop];
        match self.links[l].offer(self.now, pkt) {
            Offer::Started(done) => self.q.push(done, Ev::LinkDone(l)),
            Offer::Queued => {}
            Offer::Dropped(p, cause) => {
                pkt = p;
                self.dropped(&pkt, cause, l);
            }
        }
    }

    fn arrive(&mut self, _link: usize, mut pkt: InFlight) {
        pkt.hop += 1;
        if pkt.hop < self.routes[pkt.route].len() {
            self.offer(pkt);
            return;
        }
        let Some(packet) = pkt.packet else {
            if let Some(f) = pkt.flow {
                self.rec.borrow_mut().flows[f].delivered_bytes += pkt.size as u64;
            }
            return;
        };
        if pkt.data && pkt.dest == 1 {
            self.rec.borrow_mut().on_data_arrival(self.now, pkt.sent_at);
        }
        if (pkt.dest, pkt.flow) == (0, None) {
            if let Some(t) = self.rec.borrow_mut().trace.as_mut() {
                t.sender_received(self.now, PathId(pkt.path), &packet);
            }
        }
        self.ends[pkt.dest].handle_packet(self.now, PathId(pkt.path), packet);
        self.flush(pkt.dest);
    }

    /// Sends everything endpoint `side` has to send, drains delivered data, re-arms its timer.
    fn flush(&mut self, side: usize) {
        let (dest, flow) = (self.peer[side], self.end_flow[side]);
        let ip = self.built.config.ip_header_len;
        while let Some(t) = self.ends[side].poll_transmit(self.now) {
            if let (Some(c), None) = (self.capture.as_mut(), flow) {
                c.packet(self.now, side, t.path.0, &t.packet);
            }
            let size = t.packet.wire_len() as u32 + ip;
            let pkt = InFlight {
                data: t.packet.has_data(),
                packet: Some(t.packet),
                route: self.end_routes[side][t.path.0],
                path: t.path.0,
                dest,
                flow,
                hop: 0,
                size,
                sent_at: self.now,
            };
            self.offer(pkt);
        }
        while self.ends[side].read().is_some() {}
        let t = self.ends[side].poll_timeout().map(|t| t.max(self.now));
        if t != self.timer_at[side] {
            self.timer_at[side] = t;
            if let Some(t) = t {
                self.q.push(t, Ev::Timer(side));
            }
        }
    }
}
