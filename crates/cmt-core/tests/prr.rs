//! Proportional Rate Reduction (`Config::prr`; RFC 9937 as Linux runs it) on the
//! in-memory pair: one path of 100 ms round trip at 10 Mbit/s, Reno, RACK-TLP, the
//! receiver acking every second packet. One chunk is lost in slow start, with over a
//! hundred packets in flight.
//!
//! * Without PRR the window is cut to half at once and the path is silent until half
//!   the flight has drained: about half a round trip without a send.
//! * With PRR each SACK of two packets lets one out (Reno's β = ½), so the longest
//!   silence is a few SACK intervals; over the round trip after the loss it sends the
//!   share `ssthresh / prior window` of what is delivered, within a few packets.
//! * After the reduction the window is the controller's target, then grows as Reno
//!   again (it cannot while a reduction lasts).

mod common;

use cmt_core::config::Recovery;
use cmt_core::{Config, Duration, Event, PathId, Time};
use common::{Faults, Pair};

const CHUNK: u32 = 1452;
const LOST: u32 = 300;

fn pair(prr: bool) -> Pair {
    let sender = Config {
        recovery: Recovery::RackTlp,
        prr,
        rbuf: 8 << 20,
        ..Config::default()
    };
    let receiver = Config {
        dac: false,
        rbuf: 8 << 20,
        ..Config::default()
    };
    let link = Faults {
        rate_bps: 10_000_000,
        ..Faults::clean(50)
    };
    let mut p = Pair::new(sender, receiver, vec![link], 11);
    p.drop_first = vec![LOST];
    p.transfer(1200 * CHUNK);
    p
}

/// When the lost chunk was found lost, and the window's `(cwnd, ssthresh)` the cut
/// left (its first window event from then on).
fn loss(p: &Pair) -> (Time, u64, u64) {
    let ev = &p.a.observer().events;
    let at = ev
        .iter()
        .find_map(|(t, e)| match e {
            Event::FastRetransmit { tsn, .. }
                if (*tsn as u32).wrapping_sub(p.first_tsn_a) == LOST =>
            {
                Some(*t)
            }
            _ => None,
        })
        .expect("the loss was found");
    let (cwnd, ssthresh) = ev
        .iter()
        .filter(|(t, _)| *t >= at)
        .find_map(|(_, e)| match e {
            Event::CwndChanged { cwnd, ssthresh, .. } => Some((*cwnd, *ssthresh)),
            _ => None,
        })
        .expect("the window was cut");
    (at, cwnd, ssthresh)
}

/// What `pick` reads from the latest event of the sender's at or before `t`.
fn last_before<T>(p: &Pair, t: Time, pick: impl Fn(&Event) -> Option<T>) -> T {
    let ev = p.a.observer().events.iter();
    let mut it = ev.filter(|(at, _)| *at <= t).filter_map(|(_, e)| pick(e));
    it.next_back().expect("an event of the kind")
}

fn srtt_at(p: &Pair, t: Time) -> Duration {
    last_before(p, t, |e| match e {
        Event::RttSample { srtt, .. } => Some(*srtt),
        _ => None,
    })
}

/// DATA sends (new and resent) on path 0 in `[from, to)`.
fn sends(p: &Pair, from: Time, to: Time) -> Vec<Time> {
    let ev = p.a.observer().events.iter();
    ev.filter(|(t, e)| {
        *t >= from
            && *t < to
            && matches!(
                e,
                Event::DataSent {
                    path: PathId(0),
                    ..
                }
            )
    })
    .map(|(t, _)| *t)
    .collect()
}

fn longest_silence(times: &[Time], from: Time) -> Duration {
    let mut last = from;
    let mut gap = Duration::ZERO;
    for &t in times {
        gap = gap.max(t - last);
        last = t;
    }
    gap
}

/// The window at `t`: the last window event before it.
fn cwnd_at(p: &Pair, t: Time) -> u64 {
    last_before(p, t, |e| match e {
        Event::CwndChanged { cwnd, .. } => Some(*cwnd),
        _ => None,
    })
}

/// One packet's time on the 10 Mbit/s link (1,452 bytes of data and 48 of headers).
const PACKET: Duration = Duration::from_micros(1_200);

#[test]
fn without_prr_the_cut_silences_the_path_for_half_a_round_trip() {
    let p = pair(false);
    let (at, cwnd, ssthresh) = loss(&p);
    assert_eq!(cwnd, ssthresh, "the window is cut to ssthresh at once");
    let srtt = srtt_at(&p, at);
    let sent = sends(&p, at, at + srtt);
    let silence = longest_silence(&sent, at);
    // Half of the flight (≈ prior window − ssthresh) must drain, one packet time each.
    let drain = PACKET * (cwnd / CHUNK as u64 - 2);
    assert!(silence >= drain, "silent {silence:?}, drain {drain:?}");
}

#[test]
fn with_prr_each_sack_lets_out_its_share_and_the_window_ends_at_the_target() {
    let p = pair(true);
    let (at, _, ssthresh) = loss(&p);
    let prior = cwnd_at(&p, at - Duration::from_nanos(1));
    let srtt = srtt_at(&p, at);
    let sent = sends(&p, at, at + srtt);
    let silence = longest_silence(&sent, at);
    // A SACK every second packet (2 packet times), one packet out per SACK: three
    // SACK intervals at most between sends.
    assert!(silence <= PACKET * 6, "silent {silence:?}");
    // The queue is full, so SACKs report one packet per packet time; of what they
    // deliver, PRR lets out the share ssthresh / prior window (RFC 9937 §6).
    let delivered = srtt.as_nanos() / PACKET.as_nanos();
    let expected = delivered * ssthresh / prior;
    let n = sent.len() as u64;
    assert!(
        n.abs_diff(expected) <= 3,
        "{n} sent in a round trip, expected {expected} ({delivered} delivered, \
         window {prior} to {ssthresh})"
    );
    // Three round trips on, the reduction is over: the window is the target, grown by
    // congestion avoidance at most one packet per round trip since.
    let after = cwnd_at(&p, at + srtt * 3);
    assert!(
        (ssthresh..=ssthresh + 3 * CHUNK as u64).contains(&after),
        "window {after}, target {ssthresh}"
    );
    // … and growth resumed once it ended (none happens during a reduction): Reno's
    // one packet per round trip, at least two over the five round trips after.
    let later = cwnd_at(&p, at + srtt * 8);
    assert!(
        later >= after + 2 * CHUNK as u64,
        "window {later} five round trips after {after}: growth did not resume"
    );
}
