//! QUIC's loss recovery (`Config::recovery = Recovery::Quic`; RFC 9002 with multipath
//! QUIC's per-path rules) on the in-memory pair, against the RFC's own rules. The
//! sender's RTO.Min is 1 ms, so every `RttSample` event's `rto` is `SRTT + 4·RTTVAR`
//! unclamped and the tests can recompute RFC 9002's probe timeout from the trace:
//! `SRTT + max(4·RTTVAR, 1 ms) + max_ack_delay`, the peer's 25 ms delayed-ack time.
//!
//! * a loss with three later transmissions acknowledged is found at once (§6.1.1);
//! * a loss with fewer is found 9/8 of the larger of SRTT and the latest round trip
//!   after it was sent (§6.1.2), where SCTP's three missing reports never come;
//! * several losses of one window cut it once (§7.3.2);
//! * a silent path's probe timeout doubles at each expiry and cuts nothing (§6.2);
//!   losses spanning more than three probe periods, nothing acknowledged between them,
//!   collapse the window to two packets (§7.6);
//! * with two paths, a silent path's data goes to the other at its first probe timeout
//!   (picoquic's multipath rule).

mod common;

use cmt_core::config::Recovery;
use cmt_core::{Config, Duration, Event, PathId, Payload, SendKind, Time};
use common::{longest_gap, Faults, Pair};

const CHUNK: u32 = 1452;
const ACK_DELAY: Duration = Duration::from_millis(25);

fn cfg(recovery: Recovery) -> Config {
    Config {
        recovery,
        rto_min: Duration::from_millis(1),
        rto_initial: Duration::from_secs(1),
        sack_delay: ACK_DELAY,
        // RFC 9260's decay of an idle window stays out: the changes are recovery's.
        idle_cwnd_decay: false,
        // A path that timed out takes no data until acknowledged again: picoquic's
        // demotion of a path with retransmissions pending (the preset's setting).
        pf_enabled: true,
        pfmr: 0,
        ..Config::default()
    }
}

/// One path of 100 ms round trip; the receiver acknowledges out-of-order arrivals at
/// once (QUIC's rule, RFC 9000 §13.2.1): CMT's DAC off.
fn pair(recovery: Recovery, drop_first: Vec<u32>) -> Pair {
    let receiver = Config {
        dac: false,
        ..cfg(recovery)
    };
    let mut p = Pair::new(cfg(recovery), receiver, vec![Faults::clean(50)], 7);
    p.drop_first = drop_first;
    p
}

fn offset(p: &Pair, tsn: u64) -> u32 {
    (tsn as u32).wrapping_sub(p.first_tsn_a)
}

/// When chunk `off` was found lost.
fn lost_at(p: &Pair, off: u32) -> Option<Time> {
    p.a.observer().events.iter().find_map(|(at, e)| match e {
        Event::FastRetransmit { tsn, .. } if offset(p, *tsn) == off => Some(*at),
        _ => None,
    })
}

/// When chunk `off` was first sent.
fn sent_at(p: &Pair, off: u32) -> Time {
    p.a.observer()
        .events
        .iter()
        .find_map(|(at, e)| match e {
            Event::DataSent { tsn, .. } if offset(p, *tsn) == off => Some(*at),
            _ => None,
        })
        .expect("the chunk was sent")
}

/// The latest `(srtt, rtt, rto)` of path `path` sampled before `t`.
fn rtt_before(p: &Pair, path: usize, t: Time) -> (Duration, Duration, Duration) {
    p.a.observer()
        .events
        .iter()
        .filter(|(at, _)| *at < t)
        .filter_map(|(_, e)| match e {
            Event::RttSample {
                path: PathId(i),
                rtt,
                srtt,
                rto,
            } if *i == path => Some((*srtt, *rtt, *rto)),
            _ => None,
        })
        .next_back()
        .expect("a round trip was sampled")
}

fn timeouts(p: &Pair, path: usize) -> Vec<Time> {
    let e = p.a.observer().events.iter();
    e.filter_map(|(t, e)| match e {
        Event::Timeout {
            path: PathId(i), ..
        } if *i == path => Some(*t),
        _ => None,
    })
    .collect()
}

/// RFC 9002 §6.2.1's probe timeout of `path` at `t`, from the trace:
/// `SRTT + max(4·RTTVAR, 1 ms) + max_ack_delay` (the event's RTO is `SRTT + 4·RTTVAR`).
fn pto_before(p: &Pair, path: usize, t: Time) -> Duration {
    let (srtt, _, rto) = rtt_before(p, path, t);
    srtt + rto.saturating_sub(srtt).max(Duration::from_millis(1)) + ACK_DELAY
}

/// Window reductions of path 0, from its cwnd events.
fn cuts(p: &Pair) -> usize {
    cuts_until(p, Time::MAX)
}

/// Window reductions of path 0 before `until`.
fn cuts_until(p: &Pair, until: Time) -> usize {
    let mut last = None;
    let mut cuts = 0;
    for (_, e) in p.a.observer().events.iter().filter(|(at, _)| *at < until) {
        if let Event::CwndChanged { path, cwnd, .. } = e {
            if path.0 == 0 {
                cuts += usize::from(last.is_some_and(|l| *cwnd < l));
                last = Some(*cwnd);
            }
        }
    }
    cuts
}

fn nine_eighths(d: Duration) -> Duration {
    Duration::from_nanos(d.as_nanos() / 8 * 9)
}

#[test]
fn a_loss_three_transmissions_back_is_found_when_the_third_is_acknowledged() {
    let mut p = pair(Recovery::Quic, vec![10]);
    p.transfer(40 * CHUNK);
    let found = lost_at(&p, 10).expect("found lost");
    // The ack of chunk 13 — one round trip after it left — is the first with three
    // later transmissions acknowledged; the time threshold would wait 9/8 of one.
    let ack13 = sent_at(&p, 13) + Duration::from_millis(100);
    assert!(found >= ack13, "not before the third later ack ({found:?})");
    assert!(
        found < ack13 + Duration::from_millis(2),
        "{found:?} vs {ack13:?}"
    );
    assert!(found < sent_at(&p, 10) + nine_eighths(Duration::from_millis(100)));
    assert!(timeouts(&p, 0).is_empty());
}

#[test]
fn a_loss_with_one_later_transmission_is_found_by_time_where_sctp_times_out() {
    // Chunk 10 of 12 is lost: only chunk 11 is acknowledged after it.
    let mut q = pair(Recovery::Quic, vec![10]);
    q.transfer(12 * CHUNK);
    let found = lost_at(&q, 10).expect("found lost");
    let (srtt, rtt, _) = rtt_before(&q, 0, found);
    let expected = sent_at(&q, 10) + nine_eighths(srtt.max(rtt));
    let off = found
        .saturating_since(expected)
        .max(expected.saturating_since(found));
    assert!(off < Duration::from_micros(10), "{found:?} vs {expected:?}");
    assert!(timeouts(&q, 0).is_empty());
    let mut s = pair(Recovery::Sctp, vec![10]);
    s.transfer(12 * CHUNK);
    assert!(
        !timeouts(&s, 0).is_empty(),
        "one missing report: SCTP waits for T3"
    );
}

#[test]
fn several_losses_of_one_window_cut_it_once_and_are_no_persistent_congestion() {
    let mut p = pair(Recovery::Quic, vec![200, 203, 206]);
    p.transfer(600 * CHUNK);
    for off in [200, 203, 206] {
        assert!(lost_at(&p, off).is_some(), "chunk {off} found lost");
    }
    assert_eq!(cuts(&p), 1);
    assert_eq!(p.a.stats().persistent_congestion, 0, "sent within a few ms");
}

/// Data to the receiver is dropped from 250 ms (chunks of the last flights are in the
/// air) until this many ms; acks get through.
static BLACKOUT_END_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn blackout(t: Time, to_b: bool, _: PathId, _: &cmt_core::Packet) -> bool {
    let end = BLACKOUT_END_MS.load(std::sync::atomic::Ordering::Relaxed);
    let ms = t.as_nanos() / 1_000_000;
    to_b && (250..end).contains(&ms)
}

/// 30 chunks, the data direction blacked out from 250 ms until `end_ms`; returns the
/// pair once the transfer is over. (The blackout's end is a static: one test at a
/// time sets it, under the lock.)
fn blackout_of(end_ms: u64) -> Pair {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    BLACKOUT_END_MS.store(end_ms, std::sync::atomic::Ordering::Relaxed);
    let mut p = pair(Recovery::Quic, vec![]);
    p.drop_if = Some(blackout);
    p.transfer(30 * CHUNK);
    p
}

#[test]
fn the_probe_timeout_doubles_and_a_long_blackout_is_persistent_congestion() {
    let p = blackout_of(3_250);
    let start = Time::ZERO + Duration::from_millis(250);
    let t: Vec<Time> = timeouts(&p, 0)
        .into_iter()
        .filter(|&x| x >= start)
        .collect();
    assert!(t.len() >= 3, "{t:?}");
    // The first expiry: one probe timeout after the path's latest transmission.
    let last_sent =
        p.a.observer()
            .events
            .iter()
            .filter(|(at, e)| *at < t[0] && matches!(e, Event::DataSent { .. }))
            .map(|(at, _)| *at)
            .next_back()
            .unwrap();
    let pto = pto_before(&p, 0, t[0]);
    assert_eq!(t[0], last_sent + pto);
    // Each later one twice the one before, from the probe it sent (RFC 9002 §6.2.1).
    for k in 1..3 {
        assert_eq!(t[k] - t[k - 1], pto * (1 << k), "expiry {k}");
    }
    let end = Time::ZERO + Duration::from_millis(3_250);
    assert_eq!(cuts_until(&p, end), 0, "no cut at a probe timeout");
    // The lost chunks span the blackout, far more than three probe periods.
    assert_eq!(p.a.stats().persistent_congestion, 1);
    let two = 2 * cfg(Recovery::Quic).cwnd_unit();
    let floor =
        p.a.observer().events.iter().any(|(at, e)| {
            *at > end && matches!(e, Event::CwndChanged { cwnd, .. } if *cwnd == two)
        });
    assert!(floor, "the window fell to two packets");
}

#[test]
fn a_blackout_shorter_than_three_probe_periods_is_not_persistent_congestion() {
    // Over before the first probe: the chunks lost were sent within a few ms.
    let p = blackout_of(400);
    assert_eq!(cuts(&p), 1);
    assert_eq!(p.a.stats().persistent_congestion, 0);
}

#[test]
fn a_silent_path_s_data_moves_to_the_other_path_at_its_first_probe_timeout() {
    let faults = vec![Faults::clean(10), Faults::clean(10)];
    let mut p = Pair::named(cfg(Recovery::Quic), "round-robin", "rtx-asap", faults, 11);
    p.a.write(Payload::Synthetic(u32::MAX));
    let drain = |p: &mut Pair| {
        while p.b.read().is_some() {}
        false
    };
    let cut = Time::ZERO + Duration::from_secs(5);
    p.drive(cut, drain);
    p.down[1] = true;
    p.drive(cut + Duration::from_secs(3), drain);
    let t = timeouts(&p, 1);
    let first = *t
        .iter()
        .find(|&&x| x >= cut)
        .expect("a probe timeout on path 1");
    let ev = &p.a.observer().events;
    let last_on_1 = ev
        .iter()
        .filter(|(at, e)| {
            *at < first
                && matches!(
                    e,
                    Event::DataSent {
                        path: PathId(1),
                        ..
                    }
                )
        })
        .map(|(at, _)| *at)
        .next_back()
        .unwrap();
    assert_eq!(first, last_on_1 + pto_before(&p, 1, first));
    // Path 1's chunks go again on path 0, starting at that timeout.
    let moved = ev.iter().filter(|(at, e)| {
        *at >= first
            && matches!(
                e,
                Event::DataSent {
                    path: PathId(0),
                    kind: SendKind::TimeoutRetransmit,
                    ..
                }
            )
    });
    assert!(moved.count() > 0);
    // The longest time without delivery from the cut: the timeout, a round trip for
    // path 0's window to take the resent chunk, and its one-way delay.
    let gap = longest_gap(&p, cut);
    let bound = (first - cut) + Duration::from_millis(30);
    assert!(gap <= bound, "stall {gap:?} > {bound:?}");
}
