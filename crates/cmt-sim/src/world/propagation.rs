//! Packets in propagation, per link direction.
//!
//! After serialisation a packet travels for the link's delay. With a fixed delay the
//! packets of a direction arrive in the order they left, so only the first needs an
//! event in the queue: the others wait here, each with the sequence number it would
//! have had as an event, and the next one enters the queue when the one before it
//! arrives. The first packet waits here too (the event names the pipe, not the packet,
//! which keeps events small). The queue then holds one arrival per link instead of one
//! per packet in flight (thousands on a long, fast path) and every event runs exactly
//! when and in the order it did before. A packet that would overtake the last one
//! waiting (jitter that reorders, a delay cut by a scheduled change) gets an event of
//! its own, which carries its handle.

use std::collections::VecDeque;

use cmt_core::Time;

use super::packets::Pkt;
use super::{Ev, Simulation};
use crate::ids::LinkDir;

/// One link direction's packets in propagation: the first one's arrival is queued.
#[derive(Default)]
pub(super) struct Pipe {
    /// `(arrival, sequence number, packet)`, in arrival order.
    waiting: VecDeque<(Time, u64, Pkt)>,
    /// An arrival of this pipe is in the event queue.
    head_queued: bool,
    /// Arrival time of the latest packet that entered the pipe.
    last: Time,
}

impl Simulation {
    /// `pkt` left link `l` and arrives at `at`.
    pub(super) fn depart(&mut self, l: LinkDir, at: Time, pkt: Pkt) {
        let pipe = &mut self.pipes[l.0];
        if !pipe.head_queued {
            pipe.head_queued = true;
            pipe.last = at;
            let seq = self.q.reserve();
            pipe.waiting.push_back((at, seq, pkt));
            self.q.push_reserved(at, seq, Ev::Arrive(l));
        } else if at >= pipe.last {
            pipe.last = at;
            let seq = self.q.reserve();
            pipe.waiting.push_back((at, seq, pkt));
        } else {
            self.q.push(at, Ev::Overtaking(pkt));
        }
    }

    /// The queued arrival of pipe `l` is happening: takes its packet and queues the
    /// next one's arrival.
    pub(super) fn next_arrival(&mut self, l: LinkDir) -> Pkt {
        let pipe = &mut self.pipes[l.0];
        let (_, _, pkt) = pipe
            .waiting
            .pop_front()
            .expect("a queued pipe arrival has its packet in the pipe");
        match pipe.waiting.front() {
            Some(&(at, seq, _)) => self.q.push_reserved(at, seq, Ev::Arrive(l)),
            None => pipe.head_queued = false,
        }
        pkt
    }
}
