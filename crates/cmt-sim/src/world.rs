//! The simulation: the association under study (endpoints 0 and 1), the endpoints of
//! closed-loop background flows (TCP-like, multipath, web, video), open-loop sources,
//! the links between them, and the event loop that moves packets and fires timers in
//! `(time, seq)` order.

use std::cell::RefCell;
use std::rc::Rc;

use cmt_core::{Packet, PathId, Payload, Time};

use crate::ids::{EndpointId, FlowId, LinkDir, RouteId};
use crate::link::{Cargo, DropCause, Ecn, Finished, InFlight, Link, Offer};
use crate::queue::EventQueue;
use crate::recorder::Recorder;
use crate::scenario::{Built, Workload};
use crate::traffic::Source;

mod apps;
mod assemble;
mod bounds;
mod churn;
mod endpoint;
mod packets;
mod propagation;
mod timer_keys;

pub use assemble::draw_link;
use endpoint::Endpoint;
use packets::{Packets, Pkt};

#[derive(Clone, Copy)]
enum Ev {
    LinkDone(LinkDir),
    /// The first packet in a link's propagation pipe arrives at the far end
    /// (`world/propagation.rs`; the packet waits in the pipe, so events stay small).
    Arrive(LinkDir),
    /// A packet that overtakes those in its link's pipe arrives at the far end.
    Overtaking(Pkt),
    /// An endpoint's timer event (`world/timer_keys.rs`; its sequence number is the
    /// event's own).
    Timer(EndpointId),
    /// A scheduled change: index into the scenario's events.
    LinkEvent(usize),
    Traffic(FlowId),
    End,
}

// Events move by copy in the queue's sorted array: they stay two words.
const _: () = assert!(std::mem::size_of::<Ev>() <= 16);

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
    forward_loss(built, &|l| drawn[l].loss, links, LossMeasure::Packets)
}

/// What [`forward_loss`] adds up per link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LossMeasure {
    /// The long-run fraction of packets lost.
    Packets,
    /// The rate at which loss episodes begin (a burst counted once).
    Episodes,
}

/// A path's forward loss in series over its links: each link's Bernoulli loss
/// (`bernoulli`, by link index: as drawn, or as an event set it), its Gilbert model and
/// its named loss model, measured by `measure` (a probability per packet).
fn forward_loss(
    built: &Built,
    bernoulli: &dyn Fn(usize) -> f64,
    links: &[usize],
    measure: LossMeasure,
) -> f64 {
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
            (1.0 - bernoulli(l)) * (1.0 - g) * (1.0 - m)
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
    /// A registered algorithm failed
    /// ([`cmt_core::extension_failure`]); [`Simulation::extension_failure`] says why.
    ExtensionFailed,
}

/// A runnable simulation built from a scenario.
pub struct Simulation {
    pub(crate) built: Built,
    now: Time,
    q: EventQueue<Ev>,
    links: Vec<Link<Pkt>>,
    /// Per link direction, the packets in propagation.
    pipes: Vec<propagation::Pipe>,
    /// The packets in the network (links, pipes and queues hold their handles).
    packets: Packets,
    /// Link chains: route 2p is path p sender → receiver, 2p + 1 the way back;
    /// background flows follow.
    routes: Vec<Vec<LinkDir>>,
    /// Endpoints: 0 and 1 the association under study, then sender and receiver of
    /// each closed-loop flow (TCP-like, multipath, web or video).
    ends: Vec<Endpoint>,
    /// pcap capture of the association under study.
    capture: Option<crate::capture::Capture>,
    /// Per background flow: its closed-loop flow's sender endpoint.
    flow_sender: Vec<Option<EndpointId>>,
    pub(crate) rec: Rc<RefCell<Recorder>>,
    pub(crate) events: u64,
    pub(crate) drawn: Vec<Drawn>,
    /// Every link direction's parameters as the run started (after the draws, before
    /// any scheduled change): the bounds replay the changes from them.
    start_params: Vec<crate::link::LinkParams>,
    pub(crate) ending: Option<Ending>,
    /// Why a registered algorithm failed, when one did.
    failure: Option<String>,
    /// Per background flow: the open-loop source and its route (`None` for TCP flows).
    pub(crate) sources: Vec<Option<(Source, RouteId)>>,
    /// Per background flow: an application-limited flow's progress (`None` for the
    /// others).
    pub(crate) apps: Vec<Option<crate::app::AppState>>,
    /// The endpoint whose radios are metered (`metrics.device`), when a path has one.
    radio_side: Option<EndpointId>,
}

impl Simulation {
    /// Runs to the end. `progress` gets the fraction of simulated time done now and then.
    pub fn run(&mut self, progress: &mut dyn FnMut(f64)) -> Ending {
        let (end, file) = match self.built.workload {
            Workload::Timed(d) => (Time::ZERO + d, None),
            Workload::File { bytes, limit } => (Time::ZERO + limit, Some(bytes)),
        };
        match file {
            None => self.ends[EndpointId::SENDER].assoc.write_backlog(),
            Some(mut bytes) => {
                while bytes > 0 {
                    let part = bytes.min(u32::MAX as u64 / 2);
                    self.ends[EndpointId::SENDER]
                        .assoc
                        .write(Payload::Synthetic(part as u32));
                    bytes -= part;
                }
            }
        }
        self.q.push(end, Ev::End);
        for (i, e) in self.built.events.iter().enumerate() {
            self.q.push(Time::ZERO + e.at, Ev::LinkEvent(i));
        }
        for (i, t) in self.built.traffic.iter().enumerate() {
            self.q.push(Time::ZERO + t.start, Ev::Traffic(FlowId(i)));
        }
        self.flush(EndpointId::SENDER);
        self.flush(EndpointId::RECEIVER);
        let span = end.as_nanos().max(1) as f64;
        while let Some((at, ev)) = self.q.pop() {
            self.now = at;
            self.events += 1;
            if self.events & 0xffff == 0 {
                progress(at.as_nanos() as f64 / span);
                if cmt_core::extension_failure::failed() {
                    self.ending = Some(Ending::ExtensionFailed);
                    break;
                }
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
                Ev::Traffic(f) => match self.flow_sender[f.0] {
                    Some(e) => {
                        self.next_object(f, e);
                        self.flush(e);
                    }
                    None => self.emit_background(f),
                },
                Ev::LinkEvent(i) => self.apply_event(i),
                Ev::Arrive(l) => {
                    let pkt = self.next_arrival(l);
                    self.arrive(pkt)
                }
                Ev::Overtaking(pkt) => self.arrive(pkt),
                Ev::Timer(side) => {
                    let seq = self.q.popped().1;
                    if self.timer_ran(side, at, seq) && self.ends[side].timer_at == Some(at) {
                        self.ends[side].timer_at = None;
                        self.ends[side].assoc.handle_timeout(at);
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
            if self.ends[EndpointId::SENDER].assoc.is_failed() {
                self.ending = Some(Ending::AssociationFailed);
                break;
            }
        }
        self.rec.borrow_mut().finish(self.now);
        self.failure = cmt_core::extension_failure::take();
        if self.failure.is_some() {
            self.ending = Some(Ending::ExtensionFailed);
        }
        progress(1.0);
        self.ending.unwrap_or(Ending::DurationElapsed)
    }

    /// Scenario event `i`: a link changes (packets a link going down held are dropped),
    /// or the sender learns that a path's address was added or removed (and tells the
    /// receiver: `churn`).
    fn apply_event(&mut self, i: usize) {
        let e = self.built.events[i].clone();
        for l in e.links.iter().map(|&l| LinkDir(l)) {
            for pkt in self.links[l].change(&e.change) {
                self.dropped(pkt, DropCause::Down, l);
            }
        }
        if let Some((path, added)) = e.path {
            self.path_event(path, added);
            self.flush(EndpointId::SENDER);
        }
    }

    /// [`run`](Self::run), for a caller that wants a result: an error with the message
    /// when a registered algorithm failed (the run then has no valid result).
    pub fn try_run(&mut self, progress: &mut dyn FnMut(f64)) -> Result<Ending, String> {
        let ending = self.run(progress);
        match self.extension_failure() {
            Some(why) => Err(why.to_string()),
            None => Ok(ending),
        }
    }

    /// Why a registered algorithm failed during [`run`](Self::run) (a Python scheduler
    /// raised, …), if one did: the run has no valid result then.
    pub fn extension_failure(&self) -> Option<&str> {
        self.failure.as_deref()
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
        let sender = &self.ends[EndpointId::SENDER].assoc;
        t.set_cwnds((0..sender.num_paths()).map(|i| sender.path(PathId(i)).cwnd));
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
        self.ends[EndpointId::SENDER].assoc.stats().clone()
    }

    /// The metrics recorded so far (time-series bins, per-path totals).
    pub fn recorder(&self) -> std::cell::Ref<'_, Recorder> {
        self.rec.borrow()
    }

    fn link_done(&mut self, l: LinkDir) {
        let (fate, next) = self.links[l].finish(self.now);
        match fate {
            Some(Finished::Arrives(at, pkt)) => self.depart(l, at, pkt),
            Some(Finished::Lost(pkt, cause)) => self.dropped(pkt, cause, l),
            None => {}
        }
        self.take_link_drops(l);
        if let Some(t) = next {
            self.q.push(t, Ev::LinkDone(l));
        }
    }

    /// Accounts for what link `l`'s queue discipline dropped besides the packet at hand.
    fn take_link_drops(&mut self, l: LinkDir) {
        if self.links[l].has_dropped() {
            for (h, cause) in self.links[l].take_dropped() {
                self.dropped(h, cause, l);
            }
        }
    }

    /// The network lost `pkt` at `link`: it leaves the network and is counted.
    fn dropped(&mut self, h: Pkt, cause: DropCause, link: LinkDir) {
        self.count_drop(h, cause, link);
        self.packets.free(h);
    }

    /// Counts the loss of `h` (the recorder, the packet trace, the flow's counters).
    fn count_drop(&mut self, h: Pkt, cause: DropCause, link: LinkDir) {
        let pkt = self.packets.get_mut(h);
        let mut rec = self.rec.borrow_mut();
        match &pkt.cargo {
            Cargo::Sctp {
                packet,
                path,
                dest,
                flow: None,
            } => {
                if let Some(t) = rec.trace.as_mut() {
                    let name = &self.links[link].name;
                    t.network_drop(self.now, *path, packet, cause.as_str(), name);
                }
                if packet.has_data() && *dest == EndpointId::RECEIVER {
                    rec.on_data_drop(path.0);
                }
            }
            Cargo::Sctp {
                packet,
                flow: Some(f),
                ..
            } => {
                if packet.has_data() {
                    rec.flows[f.0].lost_packets += 1;
                }
            }
            Cargo::Background { flow } => rec.flows[flow.0].lost_packets += 1,
            Cargo::Relayed(_) => {}
        }
    }

    fn emit_background(&mut self, f: FlowId) {
        let Some((src, route)) = &mut self.sources[f.0] else {
            return;
        };
        let route = *route;
        let (size, next) = src.emit(self.now);
        if let Some(t) = next {
            self.q.push(t, Ev::Traffic(f));
        }
        {
            let mut rec = self.rec.borrow_mut();
            rec.flows[f.0].sent_packets += 1;
            rec.flows[f.0].sent_bytes += size as u64;
        }
        let pkt = InFlight {
            cargo: Cargo::Background { flow: f },
            route,
            hop: 0,
            size,
            sent_at: self.now,
            ecn: Ecn::NotEct,
        };
        self.emit(pkt);
    }

    /// A packet enters the network at the first link of its route.
    fn emit(&mut self, pkt: InFlight) {
        let l = self.routes[pkt.route][0];
        let h = self.packets.insert(pkt);
        self.offer(l, h);
    }

    /// Offers packet `h` to link `l`.
    fn offer(&mut self, l: LinkDir, h: Pkt) {
        match self.links[l].offer(self.now, h) {
            Offer::Started(done) => self.q.push(done, Ev::LinkDone(l)),
            Offer::Queued => self.take_link_drops(l),
            Offer::Dropped(h, cause) => self.dropped(h, cause, l),
        }
    }

    /// Packet `h` reached the far end of a link: the next link of its route takes it,
    /// or it has arrived.
    fn arrive(&mut self, h: Pkt) {
        let p = self.packets.get_mut(h);
        p.hop += 1;
        if let Some(&l) = self.routes[p.route].get(p.hop) {
            self.offer(l, h);
            return;
        }
        let (size, sent_at, ce) = (p.size, p.sent_at, h.is_ce());
        let arrived = match &mut p.cargo {
            Cargo::Sctp {
                packet,
                path,
                dest,
                flow,
            } => {
                // The chunk list moves out; the slot is freed below.
                let chunks = std::mem::take(&mut packet.chunks);
                let packet = Packet {
                    vtag: packet.vtag,
                    chunks,
                };
                Some((packet, *path, *dest, *flow))
            }
            Cargo::Background { flow } => {
                self.rec.borrow_mut().flows[flow.0].delivered_bytes += size as u64;
                None
            }
            Cargo::Relayed(_) => None,
        };
        self.packets.free(h);
        let Some((packet, path, dest, flow)) = arrived else {
            return;
        };
        if flow.is_none() && self.radio_side == Some(dest) {
            self.radio(path, size, false);
        }
        if packet.has_data() && dest == EndpointId::RECEIVER {
            self.rec.borrow_mut().on_data_arrival(self.now, sent_at);
        }
        if (dest, flow) == (EndpointId::SENDER, None) {
            if let Some(t) = self.rec.borrow_mut().trace.as_mut() {
                t.sender_received(self.now, path, &packet);
            }
        }
        self.ends[dest]
            .assoc
            .handle_packet_ecn(self.now, path, packet, ce);
        match flow {
            None => self.follow_reconfiguration(dest),
            Some(f) => self.check_object(f),
        }
        self.flush(dest);
    }

    /// Sends everything endpoint `side` has to send and re-arms its timer (delivered
    /// data is not kept: `Endpoint::new`).
    fn flush(&mut self, side: EndpointId) {
        let ip = self.built.config.ip_header_len;
        let (dest, flow) = (self.ends[side].peer, self.ends[side].flow);
        while let Some(t) = self.ends[side].assoc.poll_transmit(self.now) {
            if let (Some(c), None) = (self.capture.as_mut(), flow) {
                c.packet(self.now, side.0, t.path.0, &t.packet);
            }
            let size = t.packet.wire_len() as u32 + ip;
            if flow.is_none() && self.radio_side == Some(side) {
                self.radio(t.path, size, true);
            }
            let pkt = InFlight {
                route: self.ends[side].routes[t.path.0],
                cargo: Cargo::Sctp {
                    packet: t.packet,
                    path: t.path,
                    dest,
                    flow,
                },
                hop: 0,
                size,
                sent_at: self.now,
                ecn: if t.ect { Ecn::Ect } else { Ecn::NotEct },
            };
            self.emit(pkt);
        }
        let end = &mut self.ends[side];
        let t = end.assoc.poll_timeout().map(|t| t.max(self.now));
        if t != end.timer_at {
            end.timer_at = t;
            if let Some(t) = t {
                self.schedule_timer(side, t);
            }
        }
    }

    /// A packet of the association of `size` bytes on the wire on `path`, sent (`up`)
    /// or received by the device whose radios are metered.
    #[inline(never)]
    fn radio(&mut self, path: PathId, size: u32, up: bool) {
        if let Some(r) = self.rec.borrow_mut().radios.as_mut() {
            r.packet(path.0, self.now, u64::from(size), up);
        }
    }
}
