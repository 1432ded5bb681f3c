//! How a serving receiver keeps its slots for senders that move data.
//!
//! A slot is earned, not held: an association must name its file (the stream's header)
//! within [`HEADER_DEADLINE`] of its start, and must keep moving data — an association
//! that stores nothing new for the outage tolerance (`--outage-tolerance`, 300 s by
//! default) is shed as if its peer were silent. Under pressure, when every slot is taken
//! and a new sender completes its handshake (a COOKIE ECHO: its address answers, so it
//! cannot be spoofed), the running association that moved the least over the last
//! [`RATE_WINDOW`] is shed for it — only one older than [`SHED_AGE`] that moved less than
//! [`SHED_RATE`] on average; when none did, the newcomer is refused ("out of resource")
//! instead, so busy customers are never shed for a crowd. A shed association's sender
//! gets an ABORT with the reason. A sender that holds a slot without moving data
//! (slowloris: silent, answering only HEARTBEATs, or a header and then nothing) thus
//! keeps it only until someone else needs it.

use std::collections::VecDeque;
use std::sync::Arc;

use cmt_core::{Duration, Time};

use crate::transfer::meter::Meter;

/// The stream's header must have named the file this long after the association began.
pub const HEADER_DEADLINE: Duration = Duration::from_secs(10);
/// Under pressure, an association younger than this is not shed (a new sender in its
/// first round trips).
pub const SHED_AGE: Duration = Duration::from_secs(2);
/// Under pressure, an association is shed only when it stored less than this many bytes
/// per second over the last [`RATE_WINDOW`] (a 32 kbit/s sender is safe).
pub const SHED_RATE: f64 = 4096.0;
/// The window over which an association's rate is judged (from samples taken about
/// once a second: in effect the last 10 to 11 s).
pub const RATE_WINDOW: Duration = Duration::from_secs(10);

/// What the server tracks of one running association.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) meter: Arc<Meter>,
    started: Time,
    /// (time, bytes stored) about once a second, over the last [`RATE_WINDOW`].
    samples: VecDeque<(Time, u64)>,
    /// When its byte count last grew, and to what.
    grew: (Time, u64),
    /// Told to go; its task is ending.
    pub(super) shedding: bool,
}

impl Slot {
    pub(super) fn new(meter: Arc<Meter>, now: Time) -> Slot {
        Slot {
            meter,
            started: now,
            samples: VecDeque::from([(now, 0)]),
            grew: (now, 0),
            shedding: false,
        }
    }

    /// Records its progress (about once a second); a reason to shed it when one of its
    /// deadlines has passed: no header within [`HEADER_DEADLINE`], or nothing new
    /// stored for `idle_limit`.
    pub(super) fn tick(&mut self, now: Time, idle_limit: Duration) -> Option<String> {
        let bytes = self.meter.bytes();
        self.samples.push_back((now, bytes));
        while self
            .samples
            .get(1)
            .is_some_and(|&(t, _)| now.saturating_since(t) >= RATE_WINDOW)
        {
            self.samples.pop_front();
        }
        if bytes > self.grew.1 {
            self.grew = (now, bytes);
        }
        if self.shedding {
            return None;
        }
        let age = now.saturating_since(self.started);
        if !self.meter.is_named() && age >= HEADER_DEADLINE {
            return Some(format!(
                "no stream header within {} s of the association's start",
                HEADER_DEADLINE.as_secs_f64()
            ));
        }
        let idle = now.saturating_since(self.grew.0);
        (idle >= idle_limit).then(|| {
            format!(
                "nothing new stored for {} s (the server's limit)",
                idle.as_secs_f64().round()
            )
        })
    }

    /// Its rate (bytes/s) over the last [`RATE_WINDOW`] when it may be shed for a
    /// newcomer: old enough, not already going, and below [`SHED_RATE`].
    fn sheddable_rate(&self, now: Time) -> Option<f64> {
        if self.shedding || now.saturating_since(self.started) < SHED_AGE {
            return None;
        }
        let (t0, b0) = self.samples.front().copied().unwrap_or((self.started, 0));
        let span = now.saturating_since(t0).as_secs_f64().max(1.0);
        let rate = self.meter.bytes().saturating_sub(b0) as f64 / span;
        (rate < SHED_RATE).then_some(rate)
    }
}

/// Of the running associations (by tag), the one to shed for a newcomer, with its rate:
/// the slowest sheddable one, the oldest among equals.
pub(super) fn victim<'a>(
    slots: impl Iterator<Item = (u32, &'a Slot)>,
    now: Time,
) -> Option<(u32, f64)> {
    slots
        .filter_map(|(tag, s)| s.sheddable_rate(now).map(|r| (tag, r, s.started)))
        .min_by(|a, b| a.1.total_cmp(&b.1).then(a.2.cmp(&b.2)))
        .map(|(tag, r, _)| (tag, r))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: f64) -> Time {
        Time::ZERO + Duration::from_secs_f64(s)
    }

    #[test]
    fn a_slot_without_a_header_or_without_progress_is_shed_at_its_deadline() {
        let idle = Duration::from_secs(30);
        let mut silent = Slot::new(Arc::new(Meter::default()), at(0.0));
        for s in 1..10 {
            assert_eq!(silent.tick(at(s as f64), idle), None);
        }
        let why = silent.tick(at(10.0), idle).expect("shed at 10 s");
        assert!(why.contains("no stream header"), "{why}");

        let m = Arc::new(Meter::default());
        let mut stalled = Slot::new(m.clone(), at(0.0));
        m.set_named();
        m.moved(1000);
        assert_eq!(stalled.tick(at(1.0), idle), None);
        for s in 2..31 {
            assert_eq!(stalled.tick(at(s as f64), idle), None, "at {s} s");
        }
        let why = stalled.tick(at(31.0), idle).expect("idle 30 s");
        assert!(why.contains("nothing new stored for 30 s"), "{why}");
    }

    #[test]
    fn under_pressure_the_slowest_old_enough_slot_below_the_rate_floor_goes() {
        let slot = |rate: u64, started: f64| {
            let m = Arc::new(Meter::default());
            m.set_named();
            let mut s = Slot::new(m.clone(), at(started));
            for t in (started as u64 + 1)..=20 {
                m.moved(rate);
                s.tick(at(t as f64), Duration::from_secs(300));
            }
            s
        };
        let slots = [
            (1, slot(100_000, 0.0)), // busy: never shed
            (2, slot(3_000, 0.0)),   // slow, below the floor
            (3, slot(0, 0.0)),       // slowloris
            (4, slot(0, 19.0)),      // too young
        ];
        let pick = |slots: &[(u32, Slot)]| victim(slots.iter().map(|(t, s)| (*t, s)), at(20.0));
        assert_eq!(pick(&slots).map(|v| v.0), Some(3));
        assert_eq!(pick(&slots[..2]).map(|v| v.0), Some(2));
        assert_eq!(pick(&slots[..1]), None, "a busy customer is not shed");
        assert_eq!(pick(&slots[3..]), None, "a newcomer is not shed");
    }
}
