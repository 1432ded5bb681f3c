//! Sender reactions to a single lost chunk: fast retransmit after `dupthresh` missing
//! reports, one cwnd reduction on the path that lost it, Karn's rule for RTT samples.

mod common;

use cmt_core::{Config, Duration, Event, Payload, SendKind, Time};
use common::{Faults, Pair};

fn path(delay_ms: u64) -> Faults {
    Faults {
        delay: Duration::from_millis(delay_ms),
        jitter: Duration::ZERO,
        loss: 0.0,
        dup: 0.0,
        rate_bps: 0,
    }
}

fn run(cfg: Config, paths: Vec<Faults>, drop: u32) -> Pair {
    let mut p = Pair::new(cfg.clone(), cfg, paths, 3);
    p.drop_first = vec![drop];
    p.a.write(Payload::Synthetic(3_000_000));
    let done = p.drive(Time::ZERO + Duration::from_secs(60), |p| {
        while p.b.read().is_some() {}
        p.a.unacked_bytes() == 0
    });
    assert!(done, "transfer did not finish");
    p
}

#[test]
fn one_lost_chunk_is_fast_retransmitted_once_without_a_timeout() {
    for dupthresh in [3, 4] {
        let cfg = Config {
            dupthresh,
            sack_freq: 1,
            ..Config::default()
        };
        let p = run(cfg, vec![path(10), path(10)], 40);
        let tsn_of = |e: &Event| match e {
            Event::FastRetransmit { tsn, .. } => Some(*tsn),
            _ => None,
        };
        let frs: Vec<u64> =
            p.a.observer()
                .events
                .iter()
                .filter_map(|(_, e)| tsn_of(e))
                .collect();
        assert_eq!(frs.len(), 1, "dupthresh {dupthresh}: {frs:?}");
        let rtx = p.a.observer().events.iter().filter(|(_, e)| {
            matches!(e, Event::DataSent { kind: SendKind::FastRetransmit, tsn, .. } if *tsn == frs[0])
        });
        assert_eq!(rtx.count(), 1);
        assert!(!p
            .a
            .observer()
            .events
            .iter()
            .any(|(_, e)| matches!(e, Event::Timeout { .. })));
    }
}

#[test]
fn the_window_is_cut_on_the_path_that_lost_the_chunk_only() {
    let cfg = Config {
        sack_freq: 1,
        ..Config::default()
    };
    let p = run(cfg, vec![path(10), path(10)], 40);
    let ev = &p.a.observer().events;
    let (t, lost_on) = ev
        .iter()
        .find_map(|(t, e)| match e {
            Event::FastRetransmit { path, .. } => Some((*t, *path)),
            _ => None,
        })
        .unwrap();
    // Follow every window; at the loss time only the losing path may shrink.
    let mut cwnd = [4380u64; 2];
    let mut cut = Vec::new();
    for (te, e) in ev {
        if let Event::CwndChanged {
            path,
            cwnd: c,
            ssthresh,
        } = e
        {
            if *c < cwnd[path.0] && *te == t {
                cut.push((*path, *c, *ssthresh));
            }
            cwnd[path.0] = *c;
        }
    }
    assert_eq!(cut.len(), 1, "{cut:?}");
    assert_eq!(cut[0].0, lost_on);
    assert_eq!(cut[0].1, cut[0].2, "fast retransmit sets cwnd = ssthresh");
}

#[test]
fn karn_no_rtt_sample_comes_from_a_retransmitted_chunk() {
    // 10 ms one way, immediate SACKs: every valid sample is ~20 ms. A sample timed from
    // the original send of the lost chunk would include the loss-detection time.
    let cfg = Config {
        sack_freq: 1,
        ..Config::default()
    };
    for drop in [0, 1, 2, 17, 40] {
        let p = run(cfg.clone(), vec![path(10)], drop);
        for (_, e) in &p.a.observer().events {
            if let Event::RttSample { rtt, .. } = e {
                assert!(
                    *rtt < Duration::from_millis(25),
                    "drop {drop}: sample {rtt}"
                );
            }
        }
    }
}

#[test]
fn with_cuc_the_window_does_not_grow_until_the_lost_chunk_is_acked() {
    // Spec §1.4 / ns-2.35: the expected pseudo-cumack stays on the lost chunk until it
    // is acked, so the path's cwnd is frozen during recovery (no growth past a hole).
    // 10 Mbit/s so that SACKs arrive spread over the round trip, not all at once.
    let cfg = Config {
        sack_freq: 1,
        ..Config::default()
    };
    let p = run(
        cfg,
        vec![Faults {
            rate_bps: 10_000_000,
            ..path(10)
        }],
        60,
    );
    let a = &p.a.observer().events;
    let (t_cut, lost) = a
        .iter()
        .find_map(|(t, e)| match e {
            Event::FastRetransmit { tsn, .. } => Some((*t, *tsn)),
            _ => None,
        })
        .unwrap();
    // The retransmission reaches the receiver; its SACK is back 10 ms later.
    let t_delivered =
        p.b.observer()
            .events
            .iter()
            .find_map(|(t, e)| match e {
                Event::Delivered { tsn, .. } if tsn.wrapping_sub(lost) % (1 << 32) == 0 => Some(*t),
                _ => None,
            })
            .unwrap();
    let t_acked = t_delivered + Duration::from_millis(10);
    let mut cwnd_at_cut = None;
    for (t, e) in a {
        if let Event::CwndChanged { cwnd, .. } = e {
            if *t == t_cut {
                cwnd_at_cut = Some(*cwnd);
            } else if *t > t_cut && *t < t_acked {
                panic!(
                    "cwnd changed to {cwnd} at {t}, before the lost chunk was acked at {t_acked}"
                );
            }
        }
    }
    assert!(cwnd_at_cut.is_some());
    // And it does grow again afterwards.
    assert!(a
        .iter()
        .any(|(t, e)| *t >= t_acked && matches!(e, Event::CwndChanged { .. })));
}
