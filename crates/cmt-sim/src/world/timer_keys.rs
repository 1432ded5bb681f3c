//! An endpoint's timer events, kept out of the main queue.
//!
//! Every time an endpoint's next deadline moves (each SACK restarts T3-rtx), the
//! simulator schedules a timer event; the superseded ones stay and do nothing when
//! their time comes. On a path with a long RTO thousands of them wait at once. They
//! wait here instead, each under the `(time, sequence number)` key it would have had in
//! the queue, and only the earliest is in the queue: when it runs, the next one enters.
//! Every timer event still runs exactly when and in the order it did, and the queue
//! stays small for the packets.

use std::collections::BTreeSet;

use cmt_core::Time;

use super::{Ev, Simulation};
use crate::ids::EndpointId;

/// The pending timer events of one endpoint.
#[derive(Default)]
pub(crate) struct TimerKeys {
    /// Every pending event's key.
    pending: BTreeSet<(Time, u64)>,
    /// The keys of those in the event queue (the earliest pending one among them).
    queued: Vec<(Time, u64)>,
}

impl Simulation {
    /// Schedules a timer event of `side` at `at`.
    pub(super) fn schedule_timer(&mut self, side: EndpointId, at: Time) {
        let key = (at, self.q.reserve());
        let keys = &mut self.ends[side].timer_keys;
        keys.pending.insert(key);
        if keys.queued.iter().all(|&q| key < q) {
            keys.queued.push(key);
            self.q.push_reserved(at, key.1, Ev::Timer(side, key.1));
        }
    }

    /// The timer event `(at, seq)` of `side` ran: queue the next pending one unless it
    /// is queued already.
    pub(super) fn timer_ran(&mut self, side: EndpointId, at: Time, seq: u64) {
        let keys = &mut self.ends[side].timer_keys;
        keys.pending.remove(&(at, seq));
        keys.queued.retain(|&k| k != (at, seq));
        if let Some(&next) = keys.pending.first() {
            if !keys.queued.contains(&next) {
                keys.queued.push(next);
                self.q
                    .push_reserved(next.0, next.1, Ev::Timer(side, next.1));
            }
        }
    }
}
