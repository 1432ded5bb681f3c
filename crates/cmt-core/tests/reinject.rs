//! Reinjection as upstream Linux MPTCP does it (`Config::reinject = Reinject::Linux`;
//! `net/mptcp/protocol.c` `__mptcp_retrans`, `net/mptcp/pm.c` stale subflows), on the
//! in-memory pair: two clean 10 ms paths, RTO.Min 200 ms (Linux's), retransmissions
//! on the path that lost (RTX-SAME, as TCP subflows do), path 1 dead from 5 s.
//!
//! The model the bounds come from. Every RTO here is RTO.Min (a 20 ms round trip
//! without jitter: SRTT + 4·RTTVAR stays below 200 ms), so the association's timer
//! period is 200 ms. Once path 1 dies, the receive window fills with path 0's data
//! behind the first hole and path 0 drains within a round trip; the timer fires at
//! most one period after the last advance of the cumulative ack, and then finds path
//! 0 idle at the latest one period later; the copy of the head arrives a one-way
//! delay after that. So the longest time without delivery is at most two periods and
//! two round trips: 0.44 s. Without reinjection the hole waits for path 1 to be given
//! up: Path.Max.Retrans + 1 = 6 timeouts backed off from 200 ms, at least 12.6 s.
//! Path 1 is marked stale after more than four periods in which it had data
//! outstanding and was not heard from; from then on it gets no new data.

mod common;

use cmt_core::config::Reinject;
use cmt_core::{Config, Duration, Event, Payload, SendKind, Time};
use common::{longest_gap, Faults, Pair};

fn secs(s: f64) -> Time {
    Time::ZERO + Duration::from_secs_f64(s)
}

fn cfg(reinject: Reinject) -> Config {
    Config {
        reinject,
        rto_min: Duration::from_millis(200),
        rto_initial: Duration::from_secs(1),
        ..Config::default()
    }
}

/// A backlogged transfer; path 1 goes down at 5 s; 30 s in all.
fn outage(reinject: Reinject) -> Pair {
    outage_until(reinject, 30.0)
}

/// As [`outage`], path 1 coming back at `back` s (30: never).
fn outage_until(reinject: Reinject, back: f64) -> Pair {
    let faults = vec![Faults::clean(10), Faults::clean(10)];
    let mut p = Pair::named(cfg(reinject), "round-robin", "rtx-same", faults, 11);
    p.a.write(Payload::Synthetic(u32::MAX));
    let drain = |p: &mut Pair| {
        while p.b.read().is_some() {}
        false
    };
    p.drive(secs(5.0), drain);
    p.down[1] = true;
    p.drive(secs(back), drain);
    p.down[1] = false;
    p.drive(secs(30.0), drain);
    p
}

fn sends(p: &Pair, path: usize, kind: SendKind, from: Time) -> Vec<Time> {
    common::sends(p, path, kind, from, Time::MAX)
}

#[test]
fn a_dead_paths_hole_is_filled_on_the_idle_path_within_two_timer_periods() {
    let (linux, off) = (outage(Reinject::Linux), outage(Reinject::Off));
    let (gap, gap_off) = (longest_gap(&linux, secs(5.0)), longest_gap(&off, secs(5.0)));
    println!("longest stall: reinjection {gap}, none {gap_off}");
    assert!(
        gap <= Duration::from_millis(440),
        "stall {gap} with reinjection"
    );
    assert!(
        gap_off >= Duration::from_millis(12_600),
        "stall {gap_off} without"
    );
    let copies = sends(&linux, 0, SendKind::Copy, secs(5.0));
    assert!(
        !copies.is_empty(),
        "the hole was filled by copies on path 0"
    );
    assert!(linux.a.stats().reinjected >= copies.len() as u64);
    assert_eq!(off.a.stats().reinjected, 0);
    assert!(sends(&off, 0, SendKind::Copy, secs(0.0)).is_empty());
}

#[test]
fn a_silent_path_is_marked_stale_after_four_periods_and_gets_no_new_data() {
    let p = outage(Reinject::Linux);
    let new_on_1 = sends(&p, 1, SendKind::New, secs(5.0));
    // Stale after more than four periods of 200 ms counted from the first expiry
    // after the failure (itself within one period and a round trip of it).
    let last = new_on_1.last().copied().unwrap_or(secs(5.0));
    println!("last new chunk on the dead path at {last}");
    assert!(
        last <= secs(5.0 + 6.0 * 0.2 + 0.02),
        "new data on path 1 at {last}"
    );
    // Meanwhile path 0 carries the transfer: more is delivered after the failure
    // than without reinjection, where the hole holds everything for 12.6 s.
    let off = outage(Reinject::Off);
    let tail = |p: &Pair| -> u64 {
        p.b.observer()
            .events
            .iter()
            .filter(|(t, _)| *t >= secs(5.0))
            .map(|(_, e)| match e {
                Event::Delivered { bytes, .. } => *bytes as u64,
                _ => 0,
            })
            .sum()
    };
    assert!(tail(&p) > tail(&off), "{} against {}", tail(&p), tail(&off));
}

#[test]
fn a_stale_path_that_is_heard_from_again_gets_new_data_again() {
    // Back at 10 s. A stale path is probed by HEARTBEAT every backed-off RTO, as TCP
    // resends on a stale subflow: the mark comes at the fifth expiry (5.94 s here),
    // when path 1's RTO has doubled twice to 0.8 s, so the probes leave at 6.74, 7.54
    // (RTO 1.6 s), 9.14 (RTO 3.2 s) and 12.34 s, the first one after the return; its
    // answer, a round trip later, ends the mark.
    let p = outage_until(Reinject::Linux, 10.0);
    let stale_gap = sends(&p, 1, SendKind::New, secs(6.3));
    let back = stale_gap
        .first()
        .copied()
        .expect("new data on path 1 again");
    println!("first new chunk on path 1 after the mark at {back}");
    assert!(back >= secs(10.0), "new data on the stale path at {back}");
    assert!(back <= secs(12.5), "path 1 unused until {back}");
}
