//! RACK-TLP loss detection (`Config::recovery = Recovery::RackTlp`; RFC 8985) against
//! RFC 9260's missing-report rule, on the in-memory pair: one path of 100 ms round trip
//! unless a test says otherwise, the default timers (RTO.Min 1 s) in both, so that what
//! differs is the detection alone.
//!
//! * a tail loss (the last chunk) has no later chunk to report it missing: RFC 9260
//!   waits for the T3-rtx timer, RACK-TLP probes after two round trips (plus the
//!   worst-case delayed ack, one packet being in flight) and repairs it without a
//!   timeout (RFC 8985 §7);
//! * a loss with one later chunk delivered is found by time, `RACK.rtt + reo_wnd` after
//!   it was sent, where one missing report is not enough for fast retransmit (§6.2);
//! * reordering within the reordering window is not loss once seen (§6.2 step 4);
//! * several losses in one window cut the window once (RFC 9260 §7.2.4's recover
//!   point, kept).

mod common;

use cmt_core::config::Recovery;
use cmt_core::{Config, Duration, Event, SendKind, Time};
use common::{Faults, Pair};

const CHUNK: u32 = 1452;

fn cfg(recovery: Recovery) -> Config {
    Config {
        recovery,
        ..Config::default()
    }
}

/// The receiver acknowledges a packet that arrives out of order, or fills a hole, at
/// once (TCP's rule, RFC 5681 §4.2, which RFC 8985 relies on): CMT's DAC off.
fn pair(recovery: Recovery, faults: Vec<Faults>, drop_first: Vec<u32>) -> Pair {
    let receiver = Config {
        dac: false,
        ..Config::default()
    };
    let mut p = Pair::new(cfg(recovery), receiver, faults, 7);
    p.drop_first = drop_first;
    p
}

fn timeouts(p: &Pair) -> usize {
    p.a.observer()
        .events
        .iter()
        .filter(|(_, e)| matches!(e, Event::Timeout { .. }))
        .count()
}

/// When chunk `offset` (from the first TSN) was marked for fast retransmission.
fn fast_rtx_at(p: &Pair, offset: u32) -> Option<Time> {
    let tsn = |t: u64| (t as u32).wrapping_sub(p.first_tsn_a);
    p.a.observer().events.iter().find_map(|(at, e)| match e {
        Event::FastRetransmit { tsn: t, .. } if tsn(*t) == offset => Some(*at),
        _ => None,
    })
}

/// When chunk `offset` was first sent.
fn sent_at(p: &Pair, offset: u32) -> Time {
    let tsn = |t: u64| (t as u32).wrapping_sub(p.first_tsn_a);
    p.a.observer()
        .events
        .iter()
        .find_map(|(at, e)| match e {
            Event::DataSent { tsn: t, .. } if tsn(*t) == offset => Some(*at),
            _ => None,
        })
        .expect("the chunk was sent")
}

fn retransmissions(p: &Pair) -> usize {
    p.a.observer()
        .events
        .iter()
        .filter(|(_, e)| matches!(e, Event::DataSent { kind, .. } if *kind != SendKind::New))
        .count()
}

#[test]
fn a_tail_loss_is_probed_and_repaired_without_a_timeout() {
    let run = |recovery| {
        let mut p = pair(recovery, vec![Faults::clean(50)], vec![29]);
        p.transfer(30 * CHUNK);
        p
    };
    let (sctp, rack) = (run(Recovery::Sctp), run(Recovery::RackTlp));
    assert!(
        timeouts(&sctp) >= 1,
        "RFC 9260 needs T3-rtx for a tail loss"
    );
    assert_eq!(timeouts(&rack), 0, "the probe repaired it");
    assert_eq!(rack.a.stats().tail_loss_probes, 1);
    // The probe goes 2·SRTT + 200 ms (one packet in flight) after the last send, about
    // 0.4 s, where T3-rtx waits RTO.Min = 1 s: the transfer ends at least 0.5 s sooner.
    let gain = sctp.now.saturating_since(rack.now);
    assert!(gain >= Duration::from_millis(500), "{gain:?}");
}

#[test]
fn a_loss_with_one_later_chunk_delivered_is_found_by_time() {
    let mut p = pair(Recovery::RackTlp, vec![Faults::clean(50)], vec![29]);
    p.transfer(31 * CHUNK);
    assert_eq!(timeouts(&p), 0);
    assert_eq!(p.a.stats().tail_loss_probes, 0, "found before any probe");
    // Lost at its send time + RACK.rtt (100 ms) + reo_wnd (min_rtt / 4 = 25 ms), when
    // the reordering timer fires; one missing report would not have done it.
    let marked = fast_rtx_at(&p, 29).expect("chunk 29 marked lost");
    let after = marked.saturating_since(sent_at(&p, 29));
    assert!(
        after >= Duration::from_millis(125) && after <= Duration::from_millis(135),
        "{after:?}"
    );
    let mut s = pair(Recovery::Sctp, vec![Faults::clean(50)], vec![29]);
    s.transfer(31 * CHUNK);
    assert!(fast_rtx_at(&s, 29).is_none() && timeouts(&s) >= 1);
}

#[test]
fn reordering_within_the_window_is_not_loss_once_seen() {
    // 40 ms each way plus up to 15 ms of uniform jitter A→B: packets of a burst arrive
    // in any order within 15 ms, below RACK's min_rtt / 4 = 20 ms. Nothing is lost.
    let faults = || {
        vec![Faults {
            jitter: Duration::from_millis(15),
            ..Faults::clean(40)
        }]
    };
    let run = |recovery| {
        let mut p = pair(recovery, faults(), vec![]);
        p.transfer(2_000_000);
        retransmissions(&p)
    };
    let (sctp, rack) = (run(Recovery::Sctp), run(Recovery::RackTlp));
    assert!(
        sctp >= 20,
        "the missing-report rule resends reordered chunks: {sctp}"
    );
    // Only before the first reordering is seen (and the window opened) may RACK resend.
    assert!(
        rack <= 2,
        "RACK resent {rack} reordered chunks (SCTP: {sctp})"
    );
}

#[test]
fn several_losses_in_one_window_cut_it_once() {
    let mut p = pair(
        Recovery::RackTlp,
        vec![Faults::clean(50)],
        vec![200, 203, 206],
    );
    p.transfer(600 * CHUNK);
    for off in [200, 203, 206] {
        assert!(fast_rtx_at(&p, off).is_some(), "chunk {off} found lost");
    }
    assert_eq!(cuts(&p), 1, "three losses of one window: one reduction");
    assert_eq!(timeouts(&p), 0);
}

#[test]
fn one_probe_per_silence_then_the_retransmission_timer() {
    let mut p = pair(Recovery::RackTlp, vec![Faults::clean(50)], vec![]);
    p.a.write(cmt_core::Payload::Synthetic(30 * CHUNK));
    // Until the last chunk has left; then the path is silent both ways for 3 s, so
    // neither it nor any SACK gets through, nor the probe.
    let last_sent = |p: &mut Pair| {
        let first = p.first_tsn_a;
        p.a.observer().events.iter().any(|(_, e)| {
            matches!(e, Event::DataSent { tsn, .. } if (*tsn as u32).wrapping_sub(first) == 29)
        })
    };
    assert!(p.drive(Time::ZERO + Duration::from_secs(10), last_sent));
    p.down[0] = true;
    let until = p.now + Duration::from_secs(3);
    p.drive(until, |_| false);
    assert_eq!(p.a.stats().tail_loss_probes, 1, "one probe, then T3-rtx");
    assert!(timeouts(&p) >= 1);
    p.down[0] = false;
    let done = p.drive(Time::ZERO + Duration::from_secs(60), |p| {
        while p.b.read().is_some() {}
        p.a.unacked_bytes() == 0
    });
    assert!(done, "the transfer ends once the path is back");
}

/// Window reductions of the sender's path, from its cwnd events.
fn cuts(p: &Pair) -> usize {
    let mut last = None;
    let mut cuts = 0;
    for (_, e) in &p.a.observer().events {
        if let Event::CwndChanged { cwnd, .. } = e {
            cuts += usize::from(last.is_some_and(|l| *cwnd < l));
            last = Some(*cwnd);
        }
    }
    cuts
}

#[test]
fn a_loss_the_probe_repaired_cuts_the_window_once_data_sent_after_it_is_acked() {
    // The last chunk of a first write is lost and repaired by the probe; a second write
    // follows. RFC 8985 §7.4 (Linux `tcp_process_tlp_ack`): once a chunk sent after the
    // probe is acknowledged and no duplicate report named the probe's chunk, the probe
    // repaired a loss, and the window is cut as for any loss — once.
    let mut p = pair(Recovery::RackTlp, vec![Faults::clean(50)], vec![29]);
    p.transfer(30 * CHUNK);
    assert_eq!(p.a.stats().tail_loss_probes, 1);
    assert_eq!(
        cuts(&p),
        0,
        "no verdict while nothing sent after the probe is acked"
    );
    p.transfer(30 * CHUNK);
    assert_eq!(cuts(&p), 1, "the repaired loss cut the window");
    assert_eq!(timeouts(&p), 0);
}

/// The SACK that acknowledges the first write's last chunk (offset 29), dropped once:
/// the chunk arrived, but the sender hears nothing and probes.
static LAST_OF_FIRST: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
static DROPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn drop_sack_of_last(_: Time, to_b: bool, _: cmt_core::PathId, pkt: &cmt_core::Packet) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    let last = LAST_OF_FIRST.load(Relaxed);
    let of_last = pkt
        .chunks
        .iter()
        .any(|c| matches!(c, cmt_core::Chunk::Sack(s) if s.cum_tsn == last));
    !to_b && of_last && !DROPPED.swap(true, Relaxed)
}

#[test]
fn a_probe_whose_chunk_had_arrived_cuts_nothing() {
    // The probe's chunk is reported duplicate (SCTP's DSACK): nothing was lost.
    let mut p = pair(Recovery::RackTlp, vec![Faults::clean(50)], vec![]);
    LAST_OF_FIRST.store(
        p.first_tsn_a.wrapping_add(29),
        std::sync::atomic::Ordering::Relaxed,
    );
    p.drop_if = Some(drop_sack_of_last);
    p.transfer(30 * CHUNK);
    assert!(DROPPED.load(std::sync::atomic::Ordering::Relaxed));
    assert_eq!(p.a.stats().tail_loss_probes, 1);
    p.transfer(30 * CHUNK);
    assert_eq!(cuts(&p), 0, "a spurious probe is no loss");
    assert_eq!(timeouts(&p), 0);
}
