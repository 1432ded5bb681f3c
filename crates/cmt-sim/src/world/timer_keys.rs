//! An endpoint's timer events, kept out of the main queue.
//!
//! Every time an endpoint's deadline moves (each SACK restarts T3-rtx), the simulator
//! schedules a timer event at the new deadline, under the next `(time, sequence
//! number)` key; a timer event fires the endpoint's timeout only if, when it runs, the
//! deadline is still its time. Superseded events would do nothing — on a path with a
//! long RTO thousands of them wait at once, and each would cost an event. So every key
//! is kept here, but the queue gets only the one that can fire: the earliest key not
//! yet passed whose time is the current deadline (re-chosen whenever the deadline
//! moves, so a deadline that moves back to an earlier time fires under the key it
//! first had, as it always did). Timeouts fire exactly when and in the order they did;
//! only the events that did nothing are gone.

use std::collections::VecDeque;

use cmt_core::Time;

use super::{Ev, Simulation};
use crate::ids::EndpointId;

/// The timer keys of one endpoint.
#[derive(Default)]
pub(crate) struct TimerKeys {
    /// The keys not passed yet, grouped by time, in time order. Deadlines mostly move
    /// later, or back and forth between a few times (a delayed-ack deadline and a
    /// heartbeat's), so a new key joins the last group or one near the back.
    pending: VecDeque<Group>,
    /// The keys of this endpoint in the event queue: superseded choices that will run
    /// (and do nothing) and, unless one of those runs before it, the key that can fire.
    queued: Vec<(Time, u64)>,
    /// The key that fires the timeout at the current deadline.
    live: Option<(Time, u64)>,
}

/// The keys at one time: their sequence numbers, ascending.
struct Group {
    at: Time,
    first: u64,
    /// The later ones (rare: only a deadline that returns to a time it had).
    more: VecDeque<u64>,
}

impl TimerKeys {
    /// Forgets the keys that have passed (`<= popped`, the event running now).
    fn forget_passed(&mut self, popped: (Time, u64)) {
        while let Some(g) = self.pending.front_mut() {
            if g.at > popped.0 {
                break;
            }
            if g.at == popped.0 && g.first > popped.1 {
                return;
            }
            match g.more.pop_front() {
                Some(next) => g.first = next,
                None => {
                    self.pending.pop_front();
                }
            }
        }
    }

    /// Where the group of time `at` is or would go: the first group not before `at`.
    /// New times land at or near the back (a deadline usually moves later, or back
    /// before one later time it alternates with), so look there first.
    fn position(&self, at: Time) -> usize {
        let n = self.pending.len();
        for back in 0..n.min(3) {
            let i = n - back;
            if self.pending[i - 1].at < at {
                return i;
            }
        }
        self.pending.partition_point(|g| g.at < at)
    }

    /// Adds `key`, whose sequence number is the newest of all, and returns the earliest
    /// pending key at its time (an older one when the deadline returned to a time it
    /// had).
    fn insert(&mut self, key: (Time, u64)) -> (Time, u64) {
        let (at, seq) = key;
        let i = self.position(at);
        match self.pending.get_mut(i) {
            Some(g) if g.at == at => {
                g.more.push_back(seq);
                (at, g.first)
            }
            _ => {
                let more = VecDeque::new();
                self.pending.insert(
                    i,
                    Group {
                        at,
                        first: seq,
                        more,
                    },
                );
                key
            }
        }
    }

    /// Whether `key` must enter the event queue now: it is not there, and no key of
    /// this endpoint queued before it will run first (when one does, it is queued then).
    fn must_queue(&self, key: (Time, u64)) -> bool {
        self.queued.iter().all(|&q| key < q)
    }
}

impl Simulation {
    /// The endpoint's deadline moved to `at`: a new key, and the key that can fire at
    /// `at` is queued unless a key of this endpoint queued earlier will run first.
    pub(super) fn schedule_timer(&mut self, side: EndpointId, at: Time) {
        let key = (at, self.q.reserve());
        let popped = self.q.popped();
        let keys = &mut self.ends[side].timer_keys;
        keys.forget_passed(popped);
        keys.live = Some(keys.insert(key));
        self.queue_live(side);
    }

    /// The timer event `(at, seq)` of `side` is running: true when it is the one that
    /// can fire (the caller still checks the deadline, which may have been cleared).
    /// Otherwise the key that can fire is queued now if it waited behind this one.
    pub(super) fn timer_ran(&mut self, side: EndpointId, at: Time, seq: u64) -> bool {
        let keys = &mut self.ends[side].timer_keys;
        keys.queued.retain(|&k| k != (at, seq));
        keys.forget_passed((at, seq));
        if keys.live == Some((at, seq)) {
            keys.live = None;
            return true;
        }
        self.queue_live(side);
        false
    }

    /// Queues the key that can fire unless it is queued or waits behind a queued key
    /// (it never has passed: it is chosen among keys not passed, and a key waiting
    /// behind another is queued when that one runs).
    fn queue_live(&mut self, side: EndpointId) {
        let keys = &mut self.ends[side].timer_keys;
        if let Some(live) = keys.live.filter(|&k| keys.must_queue(k)) {
            debug_assert!(live > self.q.popped(), "a timer key queued after its time");
            keys.queued.push(live);
            self.q.push_reserved(live.0, live.1, Ev::Timer(side));
        }
    }
}
