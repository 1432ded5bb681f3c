//! Recovery from a path failure under the ns-2.35 profile (`compat = "ns2"`), as
//! ns-2.35's `Agent/SCTP/CMT` does it (`sctp-cmt.cc`, docs/ns2.md):
//!
//! * a HEARTBEAT ACK from a potentially-failed (or inactive) destination marks what is
//!   still outstanding there for retransmission (`ProcessChunk` calls `TimeoutRtx`),
//!   and sets its window to `cmtPFCwnd_` chunks;
//! * with CMT-PF, only an ack of a chunk sent once brings a potentially-failed
//!   destination back (`SendBufferDequeueUpTo`, `ProcessGapAckBlocks`) — an ack of a
//!   retransmission proves nothing about which copy arrived — so after a timeout the
//!   path comes back on the HEARTBEAT ACK, with that window;
//! * once Max.Burst applies, retransmissions count against it per destination
//!   (`RtxMarkedChunks`): at most five go in one go.

mod common;

use cmt_core::{Compat, Config, Duration, Event, PathId, PathState, Payload, SendKind, Time};
use common::{Faults, Pair};

fn secs(s: u64) -> Time {
    Time::ZERO + Duration::from_secs(s)
}

fn path(delay_ms: u64, rate_bps: u64) -> Faults {
    Faults {
        rate_bps,
        ..Faults::clean(delay_ms)
    }
}

/// Two paths of 4 Mbit/s and 10 ms under `compat`, CMT-PF and `rtx`; path 1 loses
/// `loss` of its packets and is down during `down`; driven to `until`.
fn run(compat: Compat, rtx: &str, loss: f64, down: (u64, u64), until: u64) -> Pair {
    run_with(compat, rtx, loss, down, until, None)
}

/// As [`run`], also dropping what `drop_if` picks.
fn run_with(
    compat: Compat,
    rtx: &str,
    loss: f64,
    down: (u64, u64),
    until: u64,
    drop_if: Option<common::DropIf>,
) -> Pair {
    let cfg = Config {
        pf_enabled: true,
        compat,
        ..Config::default()
    };
    let lossy = Faults {
        loss,
        ..path(10, 4_000_000)
    };
    let faults = vec![path(10, 4_000_000), lossy];
    let mut p = Pair::named(cfg, "round-robin", rtx, faults, 5);
    p.drop_if = drop_if;
    p.a.write(Payload::Synthetic(u32::MAX));
    for (to, is_down) in [(down.0, false), (down.1, true), (until, false)] {
        p.down[1] = is_down;
        p.drive(secs(to), |p| {
            while p.b.read().is_some() {}
            false
        });
    }
    p
}

/// Each time path 1 came back from potentially failed: when it went PF, when it came
/// back, and its cwnd set at that instant (`None` when none was).
fn returns_from_pf(p: &Pair) -> Vec<(Time, Time, Option<u64>)> {
    let ev = &p.a.observer().events;
    let mut out = Vec::new();
    let mut pf_since = None;
    for (i, (t, e)) in ev.iter().enumerate() {
        if let Event::PathStateChanged {
            path: PathId(1),
            state,
        } = e
        {
            if let (Some(since), PathState::Active) = (pf_since, state) {
                let cwnd = ev[..i]
                    .iter()
                    .rev()
                    .take_while(|(u, _)| u == t)
                    .find_map(|(_, e)| match e {
                        Event::CwndChanged {
                            path: PathId(1),
                            cwnd,
                            ..
                        } => Some(*cwnd),
                        _ => None,
                    });
                out.push((since, *t, cwnd));
            }
            pf_since = (*state == PathState::PotentiallyFailed).then_some(*t);
        }
    }
    out
}

#[test]
fn a_heartbeat_ack_from_a_pf_path_resends_what_is_still_outstanding_there() {
    // 5 % loss on path 1: timeouts while the path works, so that the retransmission a
    // timeout sends there is often still in flight when the HEARTBEAT ACK comes back.
    let p = run(Compat::Ns2, "rtx-same", 0.05, (120, 120), 120);
    let back = returns_from_pf(&p);
    assert!(back.len() >= 5, "path 1 came back {} times", back.len());
    // Chunks sent to path 1 while it was potentially failed and sent there again at the
    // instant it returns: re-marked by the HEARTBEAT ACK, not by a loss signal (their
    // copy had had no time to be reported missing or to time out).
    let mut last: std::collections::BTreeMap<u64, (Time, PathId)> = Default::default();
    let mut resent = 0;
    for (t, e) in &p.a.observer().events {
        if let Event::DataSent {
            path, tsn, kind, ..
        } = e
        {
            let again = back.iter().any(|&(since, at, _)| {
                at == *t
                    && *path == PathId(1)
                    && *kind == SendKind::TimeoutRetransmit
                    && last
                        .get(tsn)
                        .is_some_and(|&(u, q)| q == PathId(1) && u >= since && u < at)
            });
            resent += usize::from(again);
            last.insert(*tsn, (*t, *path));
        }
    }
    assert!(resent > 0, "nothing was resent when path 1 answered");
}

#[test]
fn with_cmt_pf_a_pf_path_comes_back_on_the_heartbeat_ack_with_its_pf_window() {
    // 5 % loss on path 1, and every HEARTBEAT to it lost from 10 s to 40 s: only the
    // retransmissions a timeout sends there, and their acks, get through meanwhile.
    fn heartbeats_lost(now: Time, to_b: bool, path: PathId, pkt: &cmt_core::Packet) -> bool {
        to_b && path == PathId(1)
            && (secs(10)..secs(40)).contains(&now)
            && matches!(pkt.chunks.first(), Some(cmt_core::Chunk::Heartbeat(_)))
    }
    let p = run_with(
        Compat::Ns2,
        "rtx-same",
        0.05,
        (120, 120),
        60,
        Some(heartbeats_lost),
    );
    let unit = Config {
        compat: Compat::Ns2,
        ..Config::default()
    }
    .cwnd_unit();
    let back = returns_from_pf(&p);
    assert!(back.len() >= 5, "path 1 came back {} times", back.len());
    for (_, t, cwnd) in &back {
        assert_eq!(*cwnd, Some(2 * unit), "at {t:?}: back with {cwnd:?}");
        assert!(
            !(secs(10)..secs(40)).contains(t),
            "back at {t:?} without a heartbeat"
        );
    }
}

/// The most retransmissions path `p` sent at one instant.
fn largest_retransmission_burst(pair: &Pair, p: usize) -> usize {
    let mut at: std::collections::BTreeMap<Time, usize> = Default::default();
    for (t, e) in &pair.a.observer().events {
        if let Event::DataSent {
            path,
            kind: SendKind::FastRetransmit | SendKind::TimeoutRetransmit,
            ..
        } = e
        {
            if path.0 == p {
                *at.entry(*t).or_default() += 1;
            }
        }
    }
    at.values().copied().max().unwrap_or(0)
}

#[test]
fn once_max_burst_applies_retransmissions_leave_five_at_a_time() {
    // Path 1 fails for good at 5 s: its T3 moves a window of chunks onto path 0.
    let ns2 = run(Compat::Ns2, "rtx-cwnd", 0.0, (5, 60), 60);
    let rfc = run(Compat::Rfc, "rtx-cwnd", 0.0, (5, 60), 60);
    // RFC 9260 limits new data by Max.Burst: the window's retransmissions leave at once.
    assert!(largest_retransmission_burst(&rfc, 0) > 5);
    assert!(largest_retransmission_burst(&ns2, 0) <= 5);
}
