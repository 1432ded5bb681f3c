//! Path failure and recovery (RFC 9260 §8.2–8.3; CMT-PF, docs/algorithms.md §1.6): a path that stops
//! answering is detected, the transfer continues on the others, and the path is used
//! again once heartbeats get through.

mod common;

use cmt_core::{Config, Duration, Event, PathId, PathState, Payload, SendKind, Time};
use common::{Faults, Pair};

fn faults() -> Faults {
    Faults {
        delay: Duration::from_millis(10),
        jitter: Duration::ZERO,
        loss: 0.0,
        dup: 0.0,
        rate_bps: 0,
    }
}

fn secs(s: u64) -> Time {
    Time::ZERO + Duration::from_secs(s)
}

fn delivered(p: &mut Pair) -> u64 {
    let mut n = 0;
    while let Some(c) = p.b.read() {
        n += c.len() as u64;
    }
    n
}

/// States path 1 went through at the sender, with times.
fn states(p: &Pair) -> Vec<(Time, PathState)> {
    p.a.observer()
        .events
        .iter()
        .filter_map(|(t, e)| match e {
            Event::PathStateChanged {
                path: PathId(1),
                state,
            } => Some((*t, *state)),
            _ => None,
        })
        .collect()
}

/// Bytes delivered to the receiving application in `[from, to)`.
fn delivered_between(p: &Pair, from: Time, to: Time) -> u64 {
    p.b.observer()
        .events
        .iter()
        .filter(|(t, _)| *t >= from && *t < to)
        .map(|(_, e)| match e {
            Event::Delivered { bytes, .. } => *bytes as u64,
            _ => 0,
        })
        .sum()
}

/// Two equal paths; path 1 dies at 5 s. Returns the pair after 100 s.
fn run_outage(cfg: Config) -> Pair {
    let mut p = Pair::new(cfg.clone(), cfg, vec![faults(), faults()], 7);
    p.a.write(Payload::Synthetic(u32::MAX));
    p.drive(secs(5), |p| {
        delivered(p);
        false
    });
    p.down[1] = true;
    p.drive(secs(100), |p| {
        delivered(p);
        false
    });
    p
}

#[test]
fn without_pf_a_dead_path_goes_inactive_after_path_max_retrans_and_data_keeps_flowing() {
    let p = run_outage(Config {
        assoc_max_retrans: 100,
        ..Config::default()
    });
    let st = states(&p);
    assert!(
        st.iter().all(|(_, s)| *s != PathState::PotentiallyFailed),
        "{st:?}"
    );
    let (t_inactive, _) = st
        .iter()
        .find(|(_, s)| *s == PathState::Inactive)
        .copied()
        .expect("path 1 failed");
    // Six consecutive errors (error count > Path.Max.Retrans = 5) with RTO doubling from
    // 1 s: at least 1 + 2 + 4 + 8 + 16 s after the outage began.
    assert!(
        t_inactive > secs(5 + 31),
        "inactive too early: {t_inactive}"
    );
    assert_eq!(p.a.path(PathId(1)).state, PathState::Inactive);
    // The in-memory pair has no link rates, so the transfer runs at rbuf/RTT on one
    // path as on two: after failover it is back to the rate before the failure. In
    // between, round-robin keeps losing one chunk at a time on the dead path and waits
    // for each backed-off T3 (the problem CMT-PF addresses).
    let two_paths = delivered_between(&p, secs(3), secs(5)) as f64 / 2.0;
    let outage =
        delivered_between(&p, secs(6), t_inactive) as f64 / (t_inactive - secs(6)).as_secs_f64();
    assert!(
        outage < 0.6 * two_paths,
        "outage rate {outage:.0} B/s vs {two_paths:.0}"
    );
    let after = delivered_between(&p, t_inactive + Duration::from_secs(5), secs(100)) as f64
        / (secs(100) - (t_inactive + Duration::from_secs(5))).as_secs_f64();
    assert!(
        after > 0.9 * two_paths,
        "rate after failover {after:.0} B/s vs {two_paths:.0} before"
    );
    assert!(!p.a.is_failed());
}

#[test]
fn with_cmt_pf_a_dead_path_is_pf_after_one_timeout_and_comes_back_after_repair() {
    let cfg = Config {
        pf_enabled: true,
        assoc_max_retrans: 100,
        ..Config::default()
    };
    let mut p = run_outage(cfg);
    let st = states(&p);
    assert_eq!(
        st.first().map(|x| x.1),
        Some(PathState::PotentiallyFailed),
        "{st:?}"
    );
    // PF on the first timeout: within RTO.Initial-ish of the outage, not after many.
    assert!(st[0].0 < secs(5 + 4), "PF at {}", st[0].0);
    assert!(
        st.iter().any(|(_, s)| *s == PathState::Inactive),
        "heartbeats kept failing: {st:?}"
    );
    // PF stops feeding the dead path after one timeout: over the outage the transfer
    // runs much faster than without PF.
    let with_pf = delivered_between(&p, secs(5), secs(100));
    let plain = run_outage(Config {
        assoc_max_retrans: 100,
        ..Config::default()
    });
    let without_pf = delivered_between(&plain, secs(5), secs(100));
    assert!(
        with_pf as f64 > 1.5 * without_pf as f64,
        "PF {with_pf} B vs plain {without_pf} B"
    );
    // No new data went to path 1 while it was PF or INACTIVE.
    let pf_at = st[0].0;
    let new_on_dead: usize =
        p.a.observer()
            .events
            .iter()
            .filter(|(t, e)| {
                *t > pf_at
                    && matches!(
                        e,
                        Event::DataSent {
                            path: PathId(1),
                            kind: SendKind::New,
                            ..
                        }
                    )
            })
            .count();
    assert_eq!(new_on_dead, 0);

    // Repair: heartbeats (every backed-off RTO, at most 60 s) bring it back.
    p.down[1] = false;
    let repaired = p.now;
    p.drive(secs(200), |p| {
        delivered(p);
        false
    });
    let st = states(&p);
    let (t_back, _) = *st
        .iter()
        .rev()
        .find(|(_, s)| *s == PathState::Active)
        .expect("path 1 recovered");
    assert!(
        t_back > repaired && t_back < repaired + Duration::from_secs(61),
        "back at {t_back}"
    );
    let used_again = p.a.observer().events.iter().any(|(t, e)| {
        *t > t_back
            && matches!(
                e,
                Event::DataSent {
                    path: PathId(1),
                    kind: SendKind::New,
                    ..
                }
            )
    });
    assert!(used_again, "path 1 never carried new data after recovery");
}
