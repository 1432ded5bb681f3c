//! One SCTP association over N paths with CMT (RFC 9260; Iyengar et al., ToN 2006).
//!
//! Read first: RFC 9260 §6 (data transfer), §7 (congestion control), §8 (fault
//! management); docs/algorithms.md §1.

mod backup;
mod churn;
mod ecn;
mod input;
mod lifecycle;
mod liveness;
mod loss;
mod on_path;
mod outputs;
mod prr;
mod quic;
mod rack;
mod reconfig;
mod recv;
mod reinject;
mod renege;
mod rtx_dest;
mod sack;
mod send;
mod send_buffer;
mod send_queue;
mod shutdown;
mod subflow_queue;
mod timers;
mod tsn_bits;
mod tsn_runs;
mod write_queues;

pub use outputs::{AssocStats, Transmit};
pub use reconfig::AddrRequest;
pub use shutdown::Closing;

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::cc::{CcFactory, CcInit};
use crate::config::{Config, MaxBurstMode};
use crate::event::{Event, Observer};
use crate::packet::{Chunk, Payload};
use crate::path::{Path, Paths};
use crate::rev::RevReceiver;
use crate::rtt::RttEstimator;
use crate::rtx::RetransmissionPolicy;
use crate::sched::Scheduler;
use crate::time::Time;
use crate::view::{PathId, PathState, PathView};

use lifecycle::Lifecycle;
use recv::RecvState;
use sack::AckScratch;
use send_queue::SendState;

/// The algorithm instances an association runs with.
pub struct Algorithms<'a> {
    /// Chooses paths for new data.
    pub scheduler: Box<dyn Scheduler>,
    /// Chooses destinations for retransmissions.
    pub rtx: Box<dyn RetransmissionPolicy>,
    /// Builds one congestion controller per path.
    pub cc: &'a dyn CcFactory,
}

/// Values normally agreed in the INIT / INIT-ACK exchange, plus the seed of the
/// endpoint's random stream (tie-breaks, heartbeat jitter and nonces).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssocInit {
    /// Our verification tag (packets to us must carry it).
    pub local_vtag: u32,
    /// The peer's verification tag (we put it on our packets).
    pub peer_vtag: u32,
    /// Our first TSN.
    pub initial_tsn: u32,
    /// The peer's first TSN.
    pub peer_initial_tsn: u32,
    /// The peer's initial a_rwnd.
    pub peer_rwnd: u32,
    /// Seed of this endpoint's random stream.
    pub seed: u64,
    /// When the association begins: every timer (heartbeats, the outage tolerance, the
    /// idle decay of a path that has not sent yet) runs from here, not from the
    /// driver's clock origin — a server's idle time before the association costs it
    /// nothing. The simulator's associations begin at [`Time::ZERO`].
    pub start: Time,
    /// The peer offered ECN in the INIT exchange (RFC 9260 Appendix A); ECN is used when
    /// [`Config::ecn`] is on too.
    pub peer_ecn: bool,
}

impl AssocInit {
    /// Matching parameters for two endpoints, drawn from `seed` (a stand-in for the INIT
    /// exchange when both ends are created together, as in the simulator).
    pub fn pair(seed: u64, rbuf_a: u32, rbuf_b: u32) -> (AssocInit, AssocInit) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (tag_a, tag_b) = (rng.gen_range(1..=u32::MAX), rng.gen_range(1..=u32::MAX));
        let (tsn_a, tsn_b) = (rng.gen::<u32>(), rng.gen::<u32>());
        let a = AssocInit {
            local_vtag: tag_a,
            peer_vtag: tag_b,
            initial_tsn: tsn_a,
            peer_initial_tsn: tsn_b,
            peer_rwnd: rbuf_b,
            seed: rng.gen(),
            start: Time::ZERO,
            peer_ecn: true,
        };
        let b = AssocInit {
            local_vtag: tag_b,
            peer_vtag: tag_a,
            initial_tsn: tsn_b,
            peer_initial_tsn: tsn_a,
            peer_rwnd: rbuf_a,
            seed: rng.gen(),
            start: Time::ZERO,
            peer_ecn: true,
        };
        (a, b)
    }
}

/// Receiver-driven CMT's rounds (Cao et al. 2015, CMT-Rev; MPTCP-rec 2016): what the
/// sender learned from rate adverts, and the round info of the DATA being read.
#[derive(Debug)]
struct Rounds {
    /// The round id DATA carries: the sequence number of the latest advert applied
    /// (`u32::MAX` on the wire before any).
    round: u32,
    /// Sequence number of the latest advert applied.
    latest_advert: Option<u32>,
    /// Adverts applied so far (schedulers see rounds through it).
    adverts: u64,
    /// The round info of the DATA chunk being read from a packet: round id, per-path
    /// sequence number, hold time.
    pending: Option<(u32, u32, u16)>,
}

impl Default for Rounds {
    fn default() -> Self {
        Rounds {
            round: u32::MAX,
            latest_advert: None,
            adverts: 0,
            pending: None,
        }
    }
}

/// One endpoint of a multipath association: sender and receiver halves.
///
/// Every public method, in eight groups (the quinn-proto shape):
///
/// * **construction**: [`new`](Self::new), from an [`AssocInit`] (the handshake's, or
///   [`AssocInit::pair`] for two ends created together without one: tests, the
///   simulator);
/// * **inputs**: [`handle_packet`](Self::handle_packet) for every packet that arrives on
///   a path, [`handle_timeout`](Self::handle_timeout) when the time returned by
///   [`poll_timeout`](Self::poll_timeout) is reached;
/// * **outputs**: [`poll_transmit`](Self::poll_transmit), [`poll_timeout`](Self::poll_timeout);
/// * **application**: [`write`](Self::write) / [`write_backlog`](Self::write_backlog) to
///   send, [`read`](Self::read) to take data delivered in order
///   ([`discard_delivered`](Self::discard_delivered) where the observer's deliveries are
///   enough), [`close`](Self::close) for a graceful shutdown once
///   everything is acknowledged ([`hold_shutdown_ack`](Self::hold_shutdown_ack) keeps the
///   receiver's SHUTDOWN ACK until its data is durable), [`abort`](Self::abort) to end at
///   once with an ABORT;
/// * **how it stands**: [`config`](Self::config), [`num_paths`](Self::num_paths),
///   [`path`](Self::path), [`stats`](Self::stats), [`observer`](Self::observer) /
///   [`observer_mut`](Self::observer_mut), [`max_payload`](Self::max_payload),
///   [`unsent_bytes`](Self::unsent_bytes), [`unacked_bytes`](Self::unacked_bytes),
///   [`rbuf_held`](Self::rbuf_held), [`peer_rwnd`](Self::peer_rwnd),
///   [`bound_by_reads`](Self::bound_by_reads), [`last_heard`](Self::last_heard); how it
///   ended: [`closing`](Self::closing), [`is_closed`](Self::is_closed),
///   [`is_failed`](Self::is_failed), [`peer_silent`](Self::peer_silent),
///   [`peer_violated`](Self::peer_violated), [`peer_aborted`](Self::peer_aborted),
///   [`peer_abort_cause`](Self::peer_abort_cause);
/// * **paths that come and go** (docs/algorithms.md §1.7): [`add_path`](Self::add_path),
///   [`remove_path`](Self::remove_path), [`set_backup`](Self::set_backup) /
///   [`is_backup`](Self::is_backup), and the embedder's view of the links under them,
///   [`link_up`](Self::link_up) / [`link_down`](Self::link_down);
/// * **address reconfiguration** (RFC 5061 ASCONF):
///   [`enable_reconfiguration`](Self::enable_reconfiguration) /
///   [`reconfiguration_enabled`](Self::reconfiguration_enabled), requests of our own with
///   [`reconfigure`](Self::reconfigure), [`reconfiguration_pending`](Self::reconfiguration_pending)
///   and [`take_address_results`](Self::take_address_results); the peer's with
///   [`take_address_requests`](Self::take_address_requests) and
///   [`answer_address_request`](Self::answer_address_request);
/// * **extension chunks and embedder knowledge**: [`bundle_with`](Self::bundle_with) sends
///   a chunk the core does not interpret (FILE-DIGEST) with every SHUTDOWN, SHUTDOWN ACK
///   or ABORT, [`attach_to_next_sack`](Self::attach_to_next_sack) one (ARRIVALS) with
///   the next SACK, [`take_extension_chunks`](Self::take_extension_chunks)
///   hands over those received; [`set_destination_loss_rate`](Self::set_destination_loss_rate)
///   and [`set_destination_capacity`](Self::set_destination_capacity) give algorithms a
///   path's loss rate or capacity known from outside (the simulator's oracle, an operator).
///
/// Call order: after every input or application call, call `poll_transmit` until it
/// returns `None`, then `poll_timeout` to learn when to call `handle_timeout` next.
/// Every `now` passed in must be at or after the previous one: the core keeps no clock
/// of its own, and timers, RTT samples and pacing assume time does not go backwards.
/// Protocol events go to the observer `O` as they happen.
pub struct Association<O: Observer = ()> {
    cfg: Config,
    obs: O,
    rng: ChaCha8Rng,
    local_vtag: u32,
    peer_vtag: u32,
    paths: Paths,
    views: Vec<PathView>,
    /// `Some((now, p))` right after new data went out on path `p` at `now`: `views` is
    /// exact for every other path until something else changes the paths — inputs clear
    /// this (through [`new_opportunity`](Self::new_opportunity), which each input ends
    /// with), so do the setters, and [`poll_transmit`] ignores it when it sends anything
    /// but new data first.
    ///
    /// [`poll_transmit`]: Self::poll_transmit
    views_but: Option<(Time, PathId)>,
    sched: Box<dyn Scheduler>,
    rtx_policy: Box<dyn RetransmissionPolicy>,
    snd: SendState,
    rcv: RecvState,
    ctrl: VecDeque<(PathId, Chunk)>,
    /// Chunks the application asked to bundle in front of every chunk of a type
    /// (type, chunk), e.g. a FILE-DIGEST with our SHUTDOWN ACK and its retransmissions.
    bundled: Vec<(u8, Chunk)>,
    /// A chunk the application asked to send with the next SACK that has room for it.
    sack_attachment: Option<Chunk>,
    /// FILE-DIGEST and ARRIVALS chunks received, for the application.
    extension_in: Vec<Chunk>,
    /// The latest time an input or poll gave (for path views outside a call).
    now: Time,
    /// Receiver-driven CMT, receiver side (when `cfg.rev` is set).
    rev_rx: Option<RevReceiver>,
    /// Receiver-driven CMT: the rounds the sender is in and the round info being read.
    rounds: Rounds,
    /// SACK scratch buffers, kept between SACKs (taken out while one is processed).
    scratch: Option<Box<AckScratch>>,
    sched_begin: bool,
    /// Ask the scheduler for copies at the next poll (set with `sched_begin`).
    sched_copies: bool,
    /// Reused buffer for the scheduler's copy requests.
    copy_buf: Vec<(u64, PathId)>,
    /// Max.Burst in force for the current transmission opportunity (0 = none).
    burst_limit: u32,
    /// ns-2 mode: a chunk that was fast-retransmitted or retransmitted has been
    /// cumulatively acked; from then on Max.Burst applies.
    burst_trigger: bool,
    assoc_errors: u32,
    /// Up, failed, or ended by the peer's ABORT.
    lifecycle: Lifecycle,
    stats: AssocStats,
    /// How far a graceful shutdown has come (while up).
    closing: shutdown::Closing,
    /// T2-shutdown, and the path its chunk last went on.
    t2: Option<Time>,
    t2_path: PathId,
    /// The path the peer's SHUTDOWN arrived on (our SHUTDOWN ACK answers there first).
    shutdown_from: Option<PathId>,
    /// The application holds the SHUTDOWN ACK back ([`Self::hold_shutdown_ack`]).
    shutdown_ack_held: bool,
    /// When a packet of the peer's last arrived (on any path), or the start.
    heard: Time,
    /// When the association began ([`AssocInit::start`]).
    start: Time,
    /// Address reconfiguration (RFC 5061).
    reconfig: reconfig::Reconfig,
    /// Explicit congestion notification.
    ecn: ecn::EcnState,
    /// RACK's reordering-window multiplier (with `recovery = "rack-tlp"`).
    reo_mult: crate::path::ReoWndMult,
    /// When Linux MPTCP's reinjection timer fires (with `reinject = "linux"`).
    reinject_at: Option<Time>,
}

impl<O: Observer> Association<O> {
    /// A new, established association over `num_paths` paths.
    pub fn new(
        cfg: Config,
        num_paths: usize,
        algs: Algorithms<'_>,
        init: AssocInit,
        obs: O,
    ) -> Result<Self, String> {
        cfg.validate()?;
        if num_paths == 0 {
            return Err("an association needs at least one path".into());
        }
        let mtu = cfg.cwnd_unit();
        let cc_init = CcInit {
            mtu,
            initial_cwnd: cfg.initial_cwnd(),
            initial_ssthresh: cfg
                .initial_ssthresh
                .unwrap_or(init.peer_rwnd as u64)
                .max(mtu),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(init.seed);
        let paths: Vec<Path> = (0..num_paths)
            .map(|i| {
                let rtt = RttEstimator::new(cfg.rto_initial, cfg.rto_min, cfg.rto_max);
                let mut p = Path::new(rtt, algs.cc.build(PathId(i), &cc_init));
                if cfg.heartbeats {
                    p.timers
                        .set_hb_due(Some(init.start + timers::hb_period(&cfg, &p, &mut rng)));
                }
                if cfg.confirm_paths && i > 0 {
                    p.state = PathState::Unconfirmed;
                    p.timers.set_hb_due(Some(init.start));
                }
                p
            })
            .collect();
        let rev_rx = cfg.rev.map(|r| RevReceiver::new(r, num_paths));
        Ok(Association {
            ecn: ecn::EcnState::new(cfg.ecn && init.peer_ecn),
            snd: SendState::new(init.initial_tsn, init.peer_rwnd, num_paths),
            rcv: RecvState::new(init.peer_initial_tsn),
            cfg,
            obs,
            rng,
            local_vtag: init.local_vtag,
            peer_vtag: init.peer_vtag,
            paths: Paths::new(paths),
            views: Vec::with_capacity(num_paths),
            views_but: None,
            sched: algs.scheduler,
            rtx_policy: algs.rtx,
            ctrl: VecDeque::new(),
            bundled: Vec::new(),
            sack_attachment: None,
            extension_in: Vec::new(),
            now: init.start,
            start: init.start,
            rev_rx,
            rounds: Rounds::default(),
            scratch: Some(Box::default()),
            sched_begin: true,
            sched_copies: true,
            copy_buf: Vec::new(),
            burst_limit: 0,
            burst_trigger: false,
            assoc_errors: 0,
            lifecycle: Lifecycle::Up,
            stats: AssocStats::default(),
            closing: shutdown::Closing::Open,
            t2: None,
            t2_path: PathId(0),
            shutdown_from: None,
            shutdown_ack_held: false,
            heard: init.start,
            reconfig: reconfig::Reconfig::new(init.initial_tsn, init.peer_initial_tsn),
            reo_mult: crate::path::ReoWndMult::default(),
            reinject_at: None,
        })
    }

    // ----- getters -----

    /// The configuration.
    pub fn config(&self) -> &Config {
        &self.cfg
    }
    /// Number of paths.
    pub fn num_paths(&self) -> usize {
        self.paths.len()
    }
    /// A snapshot of one path.
    pub fn path(&self, id: PathId) -> PathView {
        let hold = self.hold_marked();
        self.paths[id].view(id, self.burst_limit, self.now, self.cfg.mtu as u64, hold)
    }
    /// Configures path `path`'s loss rate for the loss-aware algorithms (rtx-lossrate,
    /// rtx-cl, CMT-QA*, BLEST): ns-2's `set-destination-lossrate`, the "oracle" of docs/algorithms.md
    /// §1.5. `None` returns to the estimate.
    pub fn set_destination_loss_rate(&mut self, path: PathId, rate: Option<f64>) {
        self.views_but = None;
        if let Some(p) = self.paths.get_mut(path.0) {
            p.losses.configured_loss = rate.map(|r| r.clamp(0.0, 1.0));
        }
    }

    /// Gives path `path`'s capacity in bytes/s (an oracle the simulator knows: the
    /// slowest forward link's rate) for schedulers that plan with it (JAPS). `None`
    /// forgets it.
    pub fn set_destination_capacity(&mut self, path: PathId, bytes_per_s: Option<f64>) {
        self.views_but = None;
        if let Some(p) = self.paths.get_mut(path.0) {
            p.capacity = bytes_per_s.filter(|b| b.is_finite() && *b > 0.0);
        }
    }

    /// Counters that are not events.
    pub fn stats(&self) -> &AssocStats {
        &self.stats
    }
    /// The observer.
    pub fn observer(&self) -> &O {
        &self.obs
    }
    /// The observer, mutably.
    pub fn observer_mut(&mut self) -> &mut O {
        &mut self.obs
    }
    /// When a packet of the peer's last arrived, on any path (the start, before any).
    pub fn last_heard(&self) -> Time {
        self.heard
    }
    /// Bundles `chunk` in front of every chunk of type `before` (a SHUTDOWN, SHUTDOWN
    /// ACK or ABORT) this endpoint sends from now on, retransmissions included, so a
    /// peer that acts on that chunk has read `chunk` first. A chunk of the same type
    /// bundled earlier with `before` is replaced.
    pub fn bundle_with(&mut self, before: u8, chunk: Chunk) {
        let t = chunk.chunk_type();
        self.bundled
            .retain(|(b, c)| !(*b == before && c.chunk_type() == t));
        self.bundled.push((before, chunk));
    }
    /// Sends `chunk` with the next SACK whose packet has room for it (once, not with its
    /// retransmissions: a SACK is never retransmitted), replacing one attached before
    /// and not sent yet.
    pub fn attach_to_next_sack(&mut self, chunk: Chunk) {
        self.sack_attachment = Some(chunk);
    }
    /// Whether a chunk given to [`attach_to_next_sack`](Self::attach_to_next_sack) is
    /// still waiting for a SACK.
    pub fn sack_attachment_pending(&self) -> bool {
        self.sack_attachment.is_some()
    }
    /// FILE-DIGEST and ARRIVALS chunks the peer sent, oldest first (the core does not
    /// interpret them).
    pub fn take_extension_chunks(&mut self) -> Vec<Chunk> {
        std::mem::take(&mut self.extension_in)
    }
    /// Largest user payload of one DATA chunk (writes in multiples of it fill packets).
    pub fn max_payload(&self) -> u32 {
        self.cfg.max_payload()
    }
    /// Bytes written by the application and not yet cumulatively acknowledged
    /// (`u64::MAX` for a backlogged source).
    pub fn unacked_bytes(&self) -> u64 {
        self.snd.unacked_bytes()
    }
    /// Bytes held in the receive buffer.
    pub fn rbuf_held(&self) -> u32 {
        self.rcv.held
    }
    /// The peer's window as the sender estimates it.
    pub fn peer_rwnd(&self) -> u64 {
        self.snd.peer_rwnd
    }

    // ----- application -----

    /// Queues bytes for ordered delivery on stream 0 (ignored once closing).
    pub fn write(&mut self, data: Payload) {
        if self.closing != shutdown::Closing::Open {
            return;
        }
        self.snd.enqueue(data);
        self.new_opportunity();
    }
    /// Makes the sender backlogged: an endless supply of length-only data (bulk transfer).
    pub fn write_backlog(&mut self) {
        self.snd.backlog = true;
        self.new_opportunity();
    }
    /// Data delivered in order, oldest first. With [`bound_by_reads`](Self::bound_by_reads)
    /// reading may make a SACK due (a window update).
    pub fn read(&mut self) -> Option<Payload> {
        let p = self.rcv.delivered.pop_front()?;
        let chunk = self.cfg.max_payload();
        self.rcv.on_read(p.len() as u32, self.cfg.rbuf, chunk);
        Some(p)
    }
    /// From now on, data delivered in order is not kept for [`read`](Self::read): for
    /// an embedder that follows deliveries through the observer's
    /// [`Event::Delivered`] alone (the simulator, whose data are lengths only). What is
    /// kept already is dropped.
    pub fn discard_delivered(&mut self) {
        self.rcv.keep_delivered = false;
        self.rcv.delivered.clear();
        self.rcv.unread = 0;
    }

    // ----- helpers shared by the halves -----

    /// A transmission opportunity starts (every input ends with one): the scheduler
    /// begins anew, Max.Burst is set for it, and the path views are made afresh.
    fn new_opportunity(&mut self) {
        self.views_but = None;
        self.sched_begin = true;
        self.sched_copies = true;
        let applies = match self.cfg.max_burst_mode {
            MaxBurstMode::Always => true,
            MaxBurstMode::Ns2 => self.burst_trigger,
        };
        self.burst_limit = if applies { self.cfg.max_burst } else { 0 };
        // Packets sent in this opportunity count against Max.Burst only while it
        // applies; every opportunity in which it does starts from zero.
        if self.burst_limit != 0 {
            for p in &mut self.paths {
                p.sending.burst_used = 0;
            }
        }
    }

    fn refresh_views(&mut self) {
        let mut views = std::mem::take(&mut self.views);
        views.clear();
        views.extend((0..self.paths.len()).map(|i| self.path_view(i)));
        self.views = views;
    }

    /// Path `i` as schedulers and policies see it now ([`Self::reserve`] applied).
    fn path_view(&self, i: usize) -> PathView {
        let (max_burst, mtu) = (self.burst_limit, self.cfg.mtu as u64);
        let view = self.paths[i].view(PathId(i), max_burst, self.now, mtu, self.hold_marked());
        self.reserve(view)
    }

    /// The views for a scheduling decision: only the path that just sent is looked at
    /// again when nothing else changed since (`views_but`), every path otherwise.
    fn refresh_views_for_new_data(&mut self, reuse: Option<(Time, PathId)>) {
        let Some((_, id)) = reuse.filter(|&(at, _)| at == self.now) else {
            return self.refresh_views();
        };
        self.views[id.0] = self.path_view(id.0);
        #[cfg(debug_assertions)]
        {
            let kept = self.views.clone();
            self.refresh_views();
            assert_eq!(kept, self.views, "path views kept across a send went stale");
        }
    }

    /// Whether to follow ns-2.35 where it differs from RFC 9260.
    fn ns2(&self) -> bool {
        self.cfg.compat == crate::config::Compat::Ns2
    }

    /// ns-2.35 compatibility: marked chunks keep their path's window for new data.
    fn hold_marked(&self) -> bool {
        self.ns2()
    }

    fn set_state(&mut self, now: Time, id: PathId, state: PathState) {
        let p = &mut self.paths[id];
        if p.state != state {
            p.state = state;
            p.timers.pf_since = (state == PathState::PotentiallyFailed).then_some(now);
            self.obs
                .event(now, &Event::PathStateChanged { path: id, state });
        }
    }

    fn cwnd_event(&mut self, now: Time, id: PathId) {
        self.window_event(now, id, false);
    }

    /// The window of `id` changed; `in_reduction`: as a step of a reduction under way.
    fn window_event(&mut self, now: Time, id: PathId, in_reduction: bool) {
        let cc = &self.paths[id].cc;
        let ev = Event::CwndChanged {
            path: id,
            cwnd: cc.cwnd(),
            ssthresh: cc.ssthresh(),
            in_reduction,
        };
        self.obs.event(now, &ev);
    }

    /// A cumulative ack beyond the last TSN sent, or covering a TSN given to a chunk
    /// not sent yet (reserved, or waiting in a path's write queue): the peer is
    /// confused or lying.
    fn acks_unsent_data(&self, cum_tsn: u32) -> bool {
        let cum = crate::tsn::unwrap_tsn(self.snd.cum_ack, cum_tsn);
        cum >= self.snd.next_tsn || self.snd.reserved.first().is_some_and(|&r| cum >= r)
    }

    /// Highest TSN received in order.
    fn rcv_cum(&self) -> u64 {
        self.rcv.cum()
    }
}
