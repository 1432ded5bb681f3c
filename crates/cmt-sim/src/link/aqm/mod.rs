//! What a link direction's queue does with the packets waiting for the link: drop-tail
//! (the default: a packet that finds the queue full is dropped), RED (Floyd and Jacobson
//! 1993, [`red`]), CoDel (RFC 8289, [`codel`]) or FQ-CoDel (RFC 8290, [`fq_codel`]).
//! RED decides as a packet arrives, CoDel as one leaves. With `ecn` on, each marks an
//! ECN-capable packet Congestion Experienced (RFC 3168) where it would drop it; a full
//! queue still drops.

pub mod codel;
mod fattest;
pub mod fq_codel;
pub mod red;

use std::collections::VecDeque;

use cmt_core::{Duration, Time};
use rand_chacha::ChaCha8Rng;

use super::Carried;
pub use codel::CodelParams;
pub use fq_codel::FqCodelParams;
pub use red::RedParams;

/// A link direction's queue discipline (`links[].aqm`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Aqm {
    /// Drop-tail at the queue limit.
    #[default]
    DropTail,
    /// Random early detection.
    Red(RedParams),
    /// Controlled delay.
    Codel(CodelParams),
    /// Flow queueing with controlled delay.
    FqCodel(FqCodelParams),
}

/// A packet waiting, with when it arrived (CoDel's sojourn time).
#[derive(Debug)]
pub struct Queued<P> {
    /// The packet.
    pub pkt: P,
    /// When it was queued.
    pub at: Time,
}

/// The packets waiting for a link, under its discipline.
pub(super) enum Qdisc<P> {
    DropTail(VecDeque<P>),
    Red(VecDeque<P>, Box<red::Red>),
    Codel(VecDeque<Queued<P>>, u64, CodelParams, codel::Codel),
    FqCodel(Box<fq_codel::FqCodel<P>>),
}

impl<P: Carried> Qdisc<P> {
    /// A queue under `aqm` for a link of `rate_bps` and propagation `delay`; `rng`
    /// draws RED's drops.
    pub(super) fn new(aqm: Aqm, rate_bps: u64, delay: Duration, rng: ChaCha8Rng) -> Self {
        match aqm {
            Aqm::DropTail => Qdisc::DropTail(VecDeque::new()),
            Aqm::Red(p) => Qdisc::Red(
                VecDeque::new(),
                Box::new(red::Red::new(p, rate_bps, delay, rng)),
            ),
            Aqm::Codel(p) => Qdisc::Codel(VecDeque::new(), 0, p, codel::Codel::default()),
            Aqm::FqCodel(p) => Qdisc::FqCodel(Box::new(fq_codel::FqCodel::new(p))),
        }
    }

    /// Packets waiting.
    pub(super) fn len(&self) -> usize {
        match self {
            Qdisc::DropTail(q) | Qdisc::Red(q, _) => q.len(),
            Qdisc::Codel(q, ..) => q.len(),
            Qdisc::FqCodel(fq) => fq.len(),
        }
    }

    /// Queues `pkt` (`limit`: packets the queue holds at most). Returns `pkt` when it is
    /// dropped instead, with whether the discipline's own rule (not the limit) dropped
    /// it; FQ-CoDel queues it and drops others at the limit, into `overflow`.
    pub(super) fn enqueue(
        &mut self,
        now: Time,
        pkt: P,
        limit: Option<usize>,
        overflow: &mut Vec<P>,
    ) -> Option<(P, bool)> {
        let full = limit.is_some_and(|l| self.len() >= l);
        match self {
            Qdisc::DropTail(q) => {
                if full {
                    return Some((pkt, false));
                }
                q.push_back(pkt);
            }
            Qdisc::Red(q, red) => {
                let mut pkt = pkt;
                if red.drops(now, q.len()) && !red.marks(&mut pkt) {
                    return Some((pkt, true));
                }
                if full {
                    return Some((pkt, false));
                }
                q.push_back(pkt);
            }
            Qdisc::Codel(q, bytes, ..) => {
                if full {
                    return Some((pkt, false));
                }
                *bytes += u64::from(pkt.wire_size());
                q.push_back(Queued { pkt, at: now });
            }
            Qdisc::FqCodel(fq) => fq.enqueue(now, pkt, limit, overflow),
        }
        None
    }

    /// A packet arrives at an idle link with nothing waiting: whether it may start at
    /// once. Only RED decides here (its average and early drop see every arrival, as
    /// in ns-2's `REDQueue::enque`); CoDel's sojourn time of such a packet is zero.
    pub(super) fn admits_at_idle(&mut self, now: Time, pkt: &mut P) -> bool {
        match self {
            Qdisc::Red(q, red) => !red.drops(now, q.len()) || red.marks(pkt),
            _ => true,
        }
    }

    /// Packets the discipline marked Congestion Experienced instead of dropping them.
    pub(super) fn marks(&self) -> u64 {
        match self {
            Qdisc::DropTail(_) => 0,
            Qdisc::Red(_, red) => red.marks,
            Qdisc::Codel(.., state) => state.marks,
            Qdisc::FqCodel(fq) => fq.marks(),
        }
    }

    /// The next packet for the link; packets the discipline drops on the way go to
    /// `dropped`.
    pub(super) fn dequeue(&mut self, now: Time, dropped: &mut Vec<P>) -> Option<P> {
        match self {
            Qdisc::DropTail(q) => q.pop_front(),
            Qdisc::Red(q, red) => {
                let p = q.pop_front();
                if p.is_none() {
                    // Nothing to send: the link goes idle (RED's average decays).
                    red.went_idle(now);
                }
                p
            }
            Qdisc::Codel(q, bytes, params, state) => state.dequeue(params, now, q, bytes, dropped),
            Qdisc::FqCodel(fq) => fq.dequeue(now, dropped),
        }
    }

    /// Removes every waiting packet.
    pub(super) fn drain(&mut self) -> Vec<P> {
        match self {
            Qdisc::DropTail(q) | Qdisc::Red(q, _) => q.drain(..).collect(),
            Qdisc::Codel(q, bytes, ..) => {
                *bytes = 0;
                q.drain(..).map(|x| x.pkt).collect()
            }
            Qdisc::FqCodel(fq) => fq.drain(),
        }
    }
}
