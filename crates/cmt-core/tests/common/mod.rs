//! A tiny in-memory driver for two associations (the quinn `Pair` idea): no simulator,
//! no sockets. Each path direction delays, loses, duplicates or reorders packets as the
//! test's fault model says, with a seeded random stream.

#![allow(dead_code)]

use std::collections::BTreeMap;

use cmt_core::cc::RenoFactory;
use cmt_core::rtx::RtxCwndFactory;
use cmt_core::rtx::RtxFactory;
use cmt_core::sched::{RoundRobinFactory, SchedulerFactory};
use cmt_core::{
    Algorithms, AssocInit, Association, Config, Duration, Event, Packet, PathId, SendKind, Time,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// How one direction of a path treats packets.
#[derive(Clone, Debug)]
pub struct Faults {
    pub delay: Duration,
    /// Extra uniform random delay (reorders packets when larger than the spacing).
    pub jitter: Duration,
    pub loss: f64,
    pub dup: f64,
    /// Serialisation rate in bit/s (0 = infinitely fast): packets leave one after another.
    pub rate_bps: u64,
}

impl Faults {
    /// A path direction that only delays, by `delay_ms`.
    pub fn clean(delay_ms: u64) -> Faults {
        Faults {
            delay: Duration::from_millis(delay_ms),
            jitter: Duration::ZERO,
            loss: 0.0,
            dup: 0.0,
            rate_bps: 0,
        }
    }
}

pub fn algorithms(paths: usize) -> Algorithms<'static> {
    Algorithms {
        scheduler: RoundRobinFactory.build(paths),
        rtx: RtxCwndFactory::default().build(),
        cc: &RenoFactory,
    }
}

/// Records every event plus the largest receive-buffer occupancy seen.
#[derive(Default)]
pub struct Log {
    pub events: Vec<(Time, Event)>,
    pub max_held: u32,
}

impl cmt_core::Observer for Log {
    fn event(&mut self, now: Time, e: &Event) {
        if let Event::RbufOccupancy { held } = e {
            self.max_held = self.max_held.max(*held);
        }
        self.events.push((now, e.clone()));
    }
}

/// A test's own fault: drops a packet when it returns true, given `(now, to_b, path,
/// packet)`.
pub type DropIf = fn(Time, bool, PathId, &Packet) -> bool;

pub struct Pair {
    pub a: Association<Log>,
    pub b: Association<Log>,
    pub now: Time,
    /// (arrival time, sequence) -> (to_b, path, packet, marked CE)
    wire: BTreeMap<(Time, u64), (bool, PathId, Packet, bool)>,
    seq: u64,
    faults: Vec<Faults>,
    rng: ChaCha8Rng,
    pub sent_packets: u64,
    /// Paths whose packets are all dropped (both directions) while true.
    pub down: Vec<bool>,
    /// A's first TSN (wire form).
    pub first_tsn_a: u32,
    /// Offsets from `first_tsn_a` whose *first* transmission from A is dropped.
    pub drop_first: Vec<u32>,
    /// Drops a packet when it returns true.
    pub drop_if: Option<DropIf>,
    /// A queue on the way marks an ECN-capable packet from A Congestion Experienced when
    /// this returns true, given the offset of its first DATA chunk's TSN from
    /// `first_tsn_a` and its path.
    pub mark_if: Option<Box<dyn FnMut(u32, PathId) -> bool>>,
    /// Packets sent ECN-capable, by A and by B.
    pub ect_sent: [u64; 2],
    /// Per path and direction (0 = A→B): when the sender's side of the link is free.
    link_free: Vec<[Time; 2]>,
}

impl Pair {
    pub fn new(cfg_a: Config, cfg_b: Config, faults: Vec<Faults>, seed: u64) -> Pair {
        let n = faults.len();
        let (ia, ib) = AssocInit::pair(seed, cfg_a.rbuf, cfg_b.rbuf);
        let a = Association::new(cfg_a, n, algorithms(n), ia, Log::default()).unwrap();
        let b = Association::new(cfg_b, n, algorithms(n), ib, Log::default()).unwrap();
        Pair::with(a, b, faults, seed)
    }

    /// As [`Pair::new`], for two associations that begin at `start` (the driver's clock
    /// has run before them: a server's uptime).
    #[allow(dead_code)]
    pub fn new_at(
        cfg_a: Config,
        cfg_b: Config,
        faults: Vec<Faults>,
        seed: u64,
        start: Time,
    ) -> Pair {
        let n = faults.len();
        let (mut ia, mut ib) = AssocInit::pair(seed, cfg_a.rbuf, cfg_b.rbuf);
        (ia.start, ib.start) = (start, start);
        let a = Association::new(cfg_a, n, algorithms(n), ia, Log::default()).unwrap();
        let b = Association::new(cfg_b, n, algorithms(n), ib, Log::default()).unwrap();
        let mut p = Pair::with(a, b, faults, seed);
        p.now = start;
        p
    }

    /// Two associations with `cfg` over `faults`, each with the scheduler, the
    /// retransmission policy named (registry names, default parameters) and Reno.
    pub fn named(cfg: Config, scheduler: &str, rtx: &str, faults: Vec<Faults>, seed: u64) -> Pair {
        let n = faults.len();
        let build = || {
            let p = cmt_core::Params::default();
            Algorithms {
                scheduler: cmt_core::sched::by_name(scheduler, &p).unwrap().build(n),
                rtx: cmt_core::rtx::by_name(rtx, &p).unwrap().build(),
                cc: &RenoFactory,
            }
        };
        let (ia, ib) = AssocInit::pair(seed, cfg.rbuf, cfg.rbuf);
        let a = Association::new(cfg.clone(), n, build(), ia, Log::default()).unwrap();
        let b = Association::new(cfg, n, build(), ib, Log::default()).unwrap();
        Pair::with(a, b, faults, seed)
    }

    /// A pair of associations built by the caller (e.g. with another scheduler).
    pub fn with(a: Association<Log>, b: Association<Log>, faults: Vec<Faults>, seed: u64) -> Pair {
        let n = faults.len();
        let first_tsn_a = AssocInit::pair(seed, a.config().rbuf, b.config().rbuf)
            .0
            .initial_tsn;
        Pair {
            first_tsn_a,
            drop_first: Vec::new(),
            drop_if: None,
            mark_if: None,
            ect_sent: [0; 2],
            a,
            b,
            now: Time::ZERO,
            wire: BTreeMap::new(),
            seq: 0,
            faults,
            rng: ChaCha8Rng::seed_from_u64(seed ^ 0x5eed),
            sent_packets: 0,
            down: vec![false; n],
            link_free: vec![[Time::ZERO; 2]; n],
        }
    }

    fn flush(&mut self) {
        for to_b in [true, false] {
            loop {
                let t = if to_b {
                    self.a.poll_transmit(self.now)
                } else {
                    self.b.poll_transmit(self.now)
                };
                let Some(t) = t else { break };
                self.sent_packets += 1;
                let f = &self.faults[t.path.0];
                let dir = if to_b { 0 } else { 1 };
                let free = &mut self.link_free[t.path.0][dir];
                let start = (*free).max(self.now);
                let tx = if f.rate_bps == 0 {
                    Duration::ZERO
                } else {
                    Duration::transmission(t.packet.wire_len() as u64 + 20, f.rate_bps)
                };
                *free = start + tx;
                let depart = start + tx;
                if self.rng.gen_bool(f.loss) || self.down[t.path.0] {
                    continue;
                }
                if self
                    .drop_if
                    .is_some_and(|drop| drop(self.now, to_b, t.path, &t.packet))
                {
                    continue;
                }
                if to_b {
                    if let Some(cmt_core::Chunk::Data(d)) = t.packet.chunks.first() {
                        let off = d.tsn.wrapping_sub(self.first_tsn_a);
                        if let Some(i) = self.drop_first.iter().position(|&x| x == off) {
                            self.drop_first.remove(i);
                            continue;
                        }
                    }
                }
                self.ect_sent[dir] += u64::from(t.ect);
                let mut ce = false;
                if let (true, Some(mark), Some(cmt_core::Chunk::Data(d))) = (
                    to_b && t.ect,
                    self.mark_if.as_mut(),
                    t.packet
                        .chunks
                        .iter()
                        .find(|c| matches!(c, cmt_core::Chunk::Data(_))),
                ) {
                    ce = mark(d.tsn.wrapping_sub(self.first_tsn_a), t.path);
                }
                let copies = if self.rng.gen_bool(f.dup) { 2 } else { 1 };
                for _ in 0..copies {
                    let j = self.rng.gen_range(0..=f.jitter.as_nanos());
                    let at = depart + f.delay + Duration::from_nanos(j);
                    self.seq += 1;
                    self.wire
                        .insert((at, self.seq), (to_b, t.path, t.packet.clone(), ce));
                }
            }
        }
    }

    /// A writes `bytes`; runs until B has read them all and A holds nothing
    /// unacknowledged, within 60 s of simulated time (panics otherwise).
    #[allow(dead_code)]
    pub fn transfer(&mut self, bytes: u32) {
        self.a.write(cmt_core::Payload::Synthetic(bytes));
        let done = self.drive(Time::ZERO + Duration::from_secs(60), |p| {
            while p.b.read().is_some() {}
            p.a.unacked_bytes() == 0
        });
        assert!(done, "transfer did not finish");
    }

    /// Runs until `done` holds or `limit` passes; returns whether `done` held.
    pub fn drive(&mut self, limit: Time, mut done: impl FnMut(&mut Pair) -> bool) -> bool {
        self.flush();
        loop {
            if done(self) {
                return true;
            }
            let next_wire = self.wire.keys().next().map(|k| k.0);
            let next = [next_wire, self.a.poll_timeout(), self.b.poll_timeout()]
                .into_iter()
                .flatten()
                .min();
            let Some(next) = next else { return done(self) };
            if next > limit {
                return false;
            }
            self.now = next.max(self.now);
            if next_wire == Some(next) {
                let (_, (to_b, path, pkt, ce)) = self.wire.pop_first().unwrap();
                if to_b {
                    self.b.handle_packet_ecn(self.now, path, pkt, ce);
                } else {
                    self.a.handle_packet_ecn(self.now, path, pkt, ce);
                }
            } else {
                if self.a.poll_timeout().is_some_and(|t| t <= self.now) {
                    self.a.handle_timeout(self.now);
                }
                if self.b.poll_timeout().is_some_and(|t| t <= self.now) {
                    self.b.handle_timeout(self.now);
                }
            }
            self.flush();
        }
    }
}

/// The longest time after `from` without a byte delivered to the application.
pub fn longest_gap(p: &Pair, from: Time) -> Duration {
    let mut last = from;
    let mut gap = Duration::ZERO;
    for (t, e) in &p.b.observer().events {
        if *t >= from && matches!(e, Event::Delivered { .. }) {
            gap = gap.max(*t - last);
            last = *t;
        }
    }
    gap
}

/// When the sender sent DATA of `kind` on `path` in `[from, to)`.
pub fn sends(p: &Pair, path: usize, kind: SendKind, from: Time, to: Time) -> Vec<Time> {
    data_sent(p, kind)
        .into_iter()
        .filter(|&(t, i, _)| i == path && t >= from && t < to)
        .map(|(t, _, _)| t)
        .collect()
}

/// The sender's DATA of `kind`, `(time, path, tsn)`, in sending order.
pub fn data_sent(p: &Pair, kind: SendKind) -> Vec<(Time, usize, u64)> {
    p.a.observer()
        .events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::DataSent {
                path: PathId(i),
                kind: k,
                tsn,
                ..
            } if *k == kind => Some((*t, *i, *tsn)),
            _ => None,
        })
        .collect()
}
