//! Metrics (docs/algorithms.md §13), fed by the core's observer events and by the network for what
//! only the network sees (packet drops, one-way delay).

use std::cell::RefCell;
use std::rc::Rc;

use cmt_core::{Duration, Event, Observer, PathState, SendKind, Time};

/// Totals of one path.
#[derive(Clone, Debug, Default)]
pub struct PathCounters {
    /// DATA packets sent (first transmissions and retransmissions).
    pub sent_packets: u64,
    /// User bytes of the DATA chunks sent (first transmissions, retransmissions and
    /// copies).
    pub sent_bytes: u64,
    /// DATA packets retransmitted.
    pub retransmissions: u64,
    /// User bytes of those retransmissions.
    pub retransmitted_bytes: u64,
    /// Scheduler copies of chunks sent on another path (redundant, JAPS).
    pub copies: u64,
    /// User bytes of those copies.
    pub copy_bytes: u64,
    /// DATA packets dropped by the network (queue or loss model).
    pub lost_packets: u64,
    /// User bytes delivered in order that arrived on this path.
    pub delivered_bytes: u64,
    /// Payload bytes that arrived on this path, duplicates included.
    pub received_bytes: u64,
    /// Times the path's cwnd went down (loss events: fast-retransmit cuts, timeouts,
    /// idle decay).
    pub cwnd_reductions: u64,
    /// Chunks first sent on this path that were marked for fast retransmission.
    pub fast_retransmits: u64,
    /// T3-rtx expiries of this path.
    pub timeouts: u64,
    /// Times the sender marked the path potentially failed or inactive.
    pub failures: u64,
    /// Times the path became active again after a failure.
    pub recoveries: u64,
    /// Window cuts for ECN Echoes (Congestion Experienced marks, no loss).
    pub ecn_cuts: u64,
}

/// Totals of one background flow.
#[derive(Clone, Debug, Default)]
pub struct FlowCounters {
    /// Packets emitted.
    pub sent_packets: u64,
    /// Bytes emitted.
    pub sent_bytes: u64,
    /// Bytes that reached the sink.
    pub delivered_bytes: u64,
    /// Packets dropped by the network.
    pub lost_packets: u64,
    /// Bytes emitted on each path (a closed-loop flow's).
    pub path_sent_bytes: Vec<u64>,
    /// A web-like flow: each completed object's flow completion time, ns.
    pub fct_ns: Vec<u64>,
    /// Window cuts for ECN Echoes, on any of the flow's paths.
    pub ecn_cuts: u64,
}

/// One time-series bin.
#[derive(Clone, Debug, Default)]
pub struct Bin {
    /// Payload bytes received, including duplicates (throughput).
    pub received_bytes: u64,
    /// Bytes delivered in order (goodput).
    pub delivered_bytes: u64,
    /// Goodput bytes per path.
    pub delivered_per_path: Vec<u64>,
    /// Throughput bytes per path.
    pub received_per_path: Vec<u64>,
    /// Largest |O3-TSN| in the bin.
    pub o3_max: u64,
    /// Highest TSN sent so far, counted from the first (Cao et al. 2015, CMT-Rev Fig. 7, MPTCP-rec 2016 Fig. 6).
    pub tsn_sent: u64,
    /// Highest TSN received so far, counted from the first.
    pub tsn_received: u64,
    /// Largest receive-buffer occupancy in the bin.
    pub rbuf_max: u32,
    /// cwnd per path at the end of the bin.
    pub cwnd: Vec<u64>,
    /// Time the sender spent receive-buffer blocked in the bin.
    pub blocked: Duration,
}

impl Bin {
    fn empty(paths: usize) -> Self {
        Bin {
            delivered_per_path: vec![0; paths],
            received_per_path: vec![0; paths],
            ..Bin::default()
        }
    }
}

/// Collects everything a run reports.
pub struct Recorder {
    /// The per-packet trace, when one is written.
    pub trace: Option<crate::packet_trace::PacketTrace>,
    bin_width: Duration,
    bin_end: Time,
    current: Bin,
    /// Closed bins.
    pub bins: Vec<Bin>,
    /// Per-path totals.
    pub paths: Vec<PathCounters>,
    /// Per background flow totals.
    pub flows: Vec<FlowCounters>,
    cwnd: Vec<u64>,
    /// Each path's latest reachability state (failures and recoveries are transitions).
    state: Vec<PathState>,
    prev_tsn: Option<u64>,
    /// Peak |O3-TSN|.
    pub o3_peak: u64,
    /// Reordering latency samples, ns, of the delivered chunks that waited in the
    /// receive buffer (one per such chunk).
    pub reordering: Vec<u64>,
    /// Delivered chunks that did not wait (reordering latency 0): most of them, so they
    /// are counted rather than stored.
    pub reordering_none: u64,
    delay_sum: f64,
    delay_n: u64,
    /// The first TSN sent (TSN figures count from it).
    first_tsn: Option<u64>,
    /// First-transmission time of chunks not delivered yet, by TSN.
    first_sent: cmt_core::tsn_window::TsnWindow<Time>,
    transit_sum: f64,
    transit_n: u64,
    jitter_sum: f64,
    prev_delay: Option<f64>,
    blocked_since: Option<Time>,
    /// Total receive-buffer blocked time at the sender.
    pub blocked_total: Duration,
    /// Fast retransmit events.
    pub fast_retransmits: u64,
    /// T3-rtx timeouts.
    pub timeouts: u64,
    /// User bytes delivered in order.
    pub delivered: u64,
    /// Payload bytes received including duplicates.
    pub received: u64,
    /// Time of the latest in-order delivery.
    pub last_delivery: Option<Time>,
    /// Largest receive-buffer occupancy.
    pub rbuf_max: u32,
    /// The association failed.
    pub failed: bool,
    /// The device's radio per path (`paths[].radio`), when any path has one.
    pub radios: Option<Radios>,
}

/// The radios of the device whose energy is measured, fed by the network with every
/// packet of the association the device sends or receives.
pub struct Radios {
    /// Per path, its meter (`None`: no radio given).
    pub meters: Vec<Option<crate::energy::RadioMeter>>,
}

impl Radios {
    /// A packet of `bytes` on the wire of `path` at `now`, `up` from the device.
    pub fn packet(&mut self, path: usize, now: Time, bytes: u64, up: bool) {
        if let Some(Some(m)) = self.meters.get_mut(path) {
            m.packet(now, bytes, up);
        }
    }
}

impl Recorder {
    /// An empty recorder for `paths` paths with bins of `bin` width starting at zero.
    pub fn new(paths: usize, bin: Duration, initial_cwnd: u64) -> Self {
        Recorder {
            trace: None,
            bin_width: bin,
            bin_end: Time::ZERO + bin,
            current: Bin::empty(paths),
            bins: Vec::new(),
            paths: vec![PathCounters::default(); paths],
            flows: Vec::new(),
            cwnd: vec![initial_cwnd; paths],
            state: vec![PathState::Active; paths],
            prev_tsn: None,
            o3_peak: 0,
            first_tsn: None,
            first_sent: Default::default(),
            transit_sum: 0.0,
            transit_n: 0,
            reordering: Vec::new(),
            reordering_none: 0,
            delay_sum: 0.0,
            delay_n: 0,
            jitter_sum: 0.0,
            prev_delay: None,
            blocked_since: None,
            blocked_total: Duration::ZERO,
            fast_retransmits: 0,
            timeouts: 0,
            delivered: 0,
            received: 0,
            last_delivery: None,
            rbuf_max: 0,
            failed: false,
            radios: None,
        }
    }

    /// Closes every bin that ends at or before `now`.
    #[inline]
    pub fn advance(&mut self, now: Time) {
        if now >= self.bin_end {
            self.close_bins_through(now);
        }
    }

    /// [`advance`](Self::advance) when a bin boundary has passed.
    #[inline(never)]
    fn close_bins_through(&mut self, now: Time) {
        while now >= self.bin_end {
            if let Some(since) = self.blocked_since {
                self.charge_blocked(since, self.bin_end);
            }
            self.close_bin();
            self.bin_end += self.bin_width;
        }
    }

    /// Adds the part of a blocked interval `[since, until]` that falls in the current bin.
    fn charge_blocked(&mut self, since: Time, until: Time) {
        let from = since.max(self.bin_end - self.bin_width);
        self.current.blocked = self.current.blocked + (until - from);
    }

    /// Stores the current bin (with the cwnd snapshot) and starts an empty one.
    fn close_bin(&mut self) {
        let empty = Bin::empty(self.paths.len());
        let mut done = std::mem::replace(&mut self.current, empty);
        done.cwnd = self.cwnd.clone();
        // The TSN curves are running maxima.
        self.current.tsn_sent = done.tsn_sent;
        self.current.tsn_received = done.tsn_received;
        self.bins.push(done);
    }

    /// A DATA packet of `path` was dropped by the network.
    pub fn on_data_drop(&mut self, path: usize) {
        self.paths[path].lost_packets += 1;
    }

    /// A DATA packet sent at `sent_at` reached the receiver at `now`.
    pub fn on_data_arrival(&mut self, now: Time, sent_at: Time) {
        let d = (now - sent_at).as_nanos() as f64;
        self.delay_sum += d;
        self.delay_n += 1;
        if let Some(p) = self.prev_delay {
            self.jitter_sum += (d - p).abs();
        }
        self.prev_delay = Some(d);
    }

    /// Mean one-way delay of DATA packets, ms.
    pub fn delay_mean_ms(&self) -> f64 {
        if self.delay_n == 0 {
            0.0
        } else {
            self.delay_sum / self.delay_n as f64 * 1e-6
        }
    }
    /// Mean time from a chunk's first transmission to its in-order delivery, ms.
    pub fn transit_mean_ms(&self) -> f64 {
        if self.transit_n == 0 {
            0.0
        } else {
            self.transit_sum / self.transit_n as f64 * 1e-6
        }
    }
    /// Mean |delay_k − delay_{k−1}|, ms.
    pub fn jitter_ms(&self) -> f64 {
        if self.delay_n < 2 {
            0.0
        } else {
            self.jitter_sum / (self.delay_n - 1) as f64 * 1e-6
        }
    }

    /// Closes the run at `end`.
    pub fn finish(&mut self, end: Time) {
        self.advance(end);
        if let Some(since) = self.blocked_since.take() {
            self.blocked_total = self.blocked_total + (end - since);
            self.charge_blocked(since, end);
        }
        if end > self.bin_end - self.bin_width {
            self.close_bin();
        }
    }

    #[inline(always)]
    fn sender_event(&mut self, now: Time, e: &Event) {
        match *e {
            Event::DataSent {
                path,
                kind,
                tsn,
                bytes,
            } => {
                let p = &mut self.paths[path.0];
                p.sent_packets += 1;
                p.sent_bytes += bytes as u64;
                match kind {
                    SendKind::New => {
                        self.first_sent.insert(tsn, now);
                        let rel = tsn - *self.first_tsn.get_or_insert(tsn);
                        self.current.tsn_sent = self.current.tsn_sent.max(rel);
                    }
                    SendKind::Copy => {
                        p.copies += 1;
                        p.copy_bytes += bytes as u64;
                    }
                    SendKind::FastRetransmit | SendKind::TimeoutRetransmit => {
                        p.retransmissions += 1;
                        p.retransmitted_bytes += bytes as u64;
                    }
                }
            }
            Event::FastRetransmit { path, .. } => {
                self.fast_retransmits += 1;
                self.paths[path.0].fast_retransmits += 1;
            }
            Event::Timeout { path, .. } => {
                self.timeouts += 1;
                self.paths[path.0].timeouts += 1;
            }
            Event::CongestionMarked { path, .. } => self.paths[path.0].ecn_cuts += 1,
            Event::CwndChanged {
                path,
                cwnd,
                in_reduction,
                ..
            } => {
                if cwnd < self.cwnd[path.0] && !in_reduction {
                    self.paths[path.0].cwnd_reductions += 1;
                }
                self.cwnd[path.0] = cwnd;
            }
            Event::RwndBlocked { blocked } => {
                if blocked {
                    self.blocked_since = Some(now);
                } else if let Some(since) = self.blocked_since.take() {
                    self.blocked_total = self.blocked_total + (now - since);
                    self.charge_blocked(since, now);
                }
            }
            Event::AssociationFailed => self.failed = true,
            Event::PathStateChanged { path, state } => {
                // A failure is a step to potentially failed or inactive; a recovery the
                // way back to ACTIVE. An address added, verified or removed is neither.
                let failed = |s| matches!(s, PathState::PotentiallyFailed | PathState::Inactive);
                let before = std::mem::replace(&mut self.state[path.0], state);
                let p = &mut self.paths[path.0];
                if failed(state) {
                    p.failures += 1;
                } else if state == PathState::Active && failed(before) {
                    p.recoveries += 1;
                }
            }
            _ => {}
        }
    }

    #[inline(always)]
    fn receiver_event(&mut self, now: Time, e: &Event) {
        match *e {
            Event::DataReceived {
                tsn, bytes, path, ..
            } => {
                self.received += bytes as u64;
                self.current.received_bytes += bytes as u64;
                self.current.received_per_path[path.0] += bytes as u64;
                self.paths[path.0].received_bytes += bytes as u64;
                if let Some(prev) = self.prev_tsn {
                    let o = tsn.abs_diff(prev);
                    self.o3_peak = self.o3_peak.max(o);
                    self.current.o3_max = self.current.o3_max.max(o);
                }
                self.prev_tsn = Some(tsn);
                if let Some(first) = self.first_tsn {
                    let rel = tsn.saturating_sub(first);
                    self.current.tsn_received = self.current.tsn_received.max(rel);
                }
            }
            Event::Delivered {
                tsn,
                bytes,
                path,
                arrived,
            } => {
                if let Some(sent) = self.first_sent.remove(tsn) {
                    self.transit_sum += (now - sent).as_nanos() as f64;
                    self.transit_n += 1;
                }
                self.delivered += bytes as u64;
                self.current.delivered_bytes += bytes as u64;
                self.current.delivered_per_path[path.0] += bytes as u64;
                self.paths[path.0].delivered_bytes += bytes as u64;
                match (now - arrived).as_nanos() {
                    0 => self.reordering_none += 1,
                    waited => self.reordering.push(waited),
                }
                self.last_delivery = Some(now);
            }
            Event::RbufOccupancy { held } => {
                self.rbuf_max = self.rbuf_max.max(held);
                self.current.rbuf_max = self.current.rbuf_max.max(held);
            }
            _ => {}
        }
    }
}

/// Which endpoint a [`Probe`] watches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Sender of the association under study.
    Sender,
    /// Receiver of the association under study.
    Receiver,
    /// Sender of background flow `f` (a TCP-like association).
    FlowSender(usize),
    /// Receiver of background flow `f`.
    FlowReceiver(usize),
}

/// The observer handed to each endpoint: a shared recorder and the endpoint's role.
pub struct Probe {
    rec: Rc<RefCell<Recorder>>,
    role: Role,
}

impl Probe {
    /// A probe for an endpoint in `role`.
    pub fn new(rec: Rc<RefCell<Recorder>>, role: Role) -> Self {
        Probe { rec, role }
    }
}

impl Observer for Probe {
    #[inline(always)]
    fn event(&mut self, now: Time, e: &Event) {
        let mut r = self.rec.borrow_mut();
        r.advance(now);
        match self.role {
            Role::Sender => {
                if let Some(t) = r.trace.as_mut() {
                    t.sender_event(now, e);
                }
                r.sender_event(now, e)
            }
            Role::Receiver => {
                if let Some(t) = r.trace.as_mut() {
                    t.receiver_event(now, e);
                }
                r.receiver_event(now, e)
            }
            Role::FlowSender(f) => {
                if let Event::CongestionMarked { .. } = e {
                    r.flows[f].ecn_cuts += 1;
                }
                if let Event::DataSent { bytes, path, .. } = *e {
                    let flow = &mut r.flows[f];
                    flow.sent_packets += 1;
                    flow.sent_bytes += bytes as u64;
                    if flow.path_sent_bytes.len() <= path.0 {
                        flow.path_sent_bytes.resize(path.0 + 1, 0);
                    }
                    flow.path_sent_bytes[path.0] += bytes as u64;
                }
            }
            Role::FlowReceiver(f) => {
                if let Event::Delivered { bytes, .. } = *e {
                    r.flows[f].delivered_bytes += bytes as u64;
                }
            }
        }
    }
}
