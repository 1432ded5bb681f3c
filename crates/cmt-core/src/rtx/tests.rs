//! Decision tables of every retransmission policy's tie-break rules.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::by_name;
use crate::params::Params;
use crate::rtx::RtxContext;
use crate::time::{Duration, Time};
use crate::view::{PathId, PathView};

/// (cwnd, ssthresh, flight, loss rate, timeouts, last timeout s ago (0 = never))
type P = (u64, u64, u64, f64, u32, u64);

fn views(ps: &[P], now: Time) -> Vec<PathView> {
    ps.iter()
        .enumerate()
        .map(
            |(i, &(cwnd, ssthresh, flight, loss_rate, timeouts, ago))| PathView {
                cwnd,
                ssthresh,
                flight,
                srtt: Some(Duration::from_millis(50)),
                timeouts,
                last_timeout: (ago > 0).then(|| now - Duration::from_secs(ago)),
                loss_rate,
                ..PathView::idle(i)
            },
        )
        .collect()
}

fn pick(name: &str, ps: &[P], seed: u64) -> usize {
    let now = Time::ZERO + Duration::from_secs(100);
    let paths = views(ps, now);
    let cands: Vec<PathId> = (0..ps.len()).map(PathId).collect();
    let ctx = RtxContext {
        now,
        paths: &paths,
        candidates: &cands,
        original: PathId(0),
        tsn: 1,
    };
    let mut policy = by_name(name, &Params::default()).unwrap().build();
    policy.select(&ctx, &mut ChaCha8Rng::seed_from_u64(seed)).0
}

#[test]
fn each_rule_in_order() {
    // (policy, paths, choice)
    let cases: &[(&str, &[P], usize)] = &[
        (
            "rtx-ssthresh",
            &[(9000, 20000, 0, 0.0, 0, 0), (20000, 9000, 0, 0.0, 0, 0)],
            0,
        ),
        (
            "rtx-lossrate",
            &[(9000, 9000, 0, 0.05, 0, 0), (9000, 9000, 0, 0.01, 0, 0)],
            1,
        ),
        (
            "rtx-cl",
            &[(20000, 0, 0, 0.09, 0, 0), (9000, 0, 0, 0.0, 0, 0)],
            0,
        ),
        (
            "rtx-cl",
            &[(9000, 0, 0, 0.09, 0, 0), (9000, 0, 0, 0.02, 0, 0)],
            1,
        ),
        (
            "rtx-asap",
            &[(9000, 0, 9000, 0.0, 0, 0), (3000, 0, 0, 0.0, 0, 0)],
            1,
        ),
        (
            "rtx-asap",
            &[(9000, 0, 9000, 0.0, 0, 0), (3000, 0, 3000, 0.0, 0, 0)],
            0,
        ),
        // RTX_CSI: (1) cwnd
        (
            "rtx-csi",
            &[(9000, 1, 0, 0.0, 5, 1), (8000, 9, 0, 0.0, 0, 0)],
            0,
        ),
        // (2) ssthresh
        (
            "rtx-csi",
            &[(9000, 5000, 0, 0.0, 0, 0), (9000, 7000, 0, 0.0, 3, 1)],
            1,
        ),
        // (3) fewer timeouts within τ = 30 s (both 10 s ago; 2 vs 1)
        (
            "rtx-csi",
            &[(9000, 7000, 0, 0.0, 2, 10), (9000, 7000, 0, 0.0, 1, 10)],
            1,
        ),
        // (4) same count, longer since the last timeout
        (
            "rtx-csi",
            &[(9000, 7000, 0, 0.0, 1, 5), (9000, 7000, 0, 0.0, 1, 20)],
            1,
        ),
        // never timed out beats timed out 20 s ago
        (
            "rtx-csi",
            &[(9000, 7000, 0, 0.0, 0, 0), (9000, 7000, 0, 0.0, 1, 20)],
            0,
        ),
    ];
    for (name, ps, want) in cases {
        for seed in 0..8 {
            assert_eq!(pick(name, ps, seed), *want, "{name} {ps:?}");
        }
    }
}

#[test]
fn remaining_ties_are_random_and_cover_every_tied_candidate() {
    for name in [
        "rtx-ssthresh",
        "rtx-lossrate",
        "rtx-cl",
        "rtx-csi",
        "rtx-cwnd",
        "rtx-asap",
    ] {
        let tied: &[P] = &[
            (9000, 7000, 0, 0.01, 0, 0),
            (9000, 7000, 0, 0.01, 0, 0),
            (9000, 7000, 0, 0.01, 0, 0),
        ];
        let mut seen = [0u32; 3];
        for seed in 0..300 {
            seen[pick(name, tied, seed)] += 1;
        }
        assert!(
            seen.iter().all(|&n| (60..=140).contains(&n)),
            "{name}: {seen:?}"
        );
    }
}

#[test]
fn timeouts_older_than_tau_no_longer_count() {
    // Path 0: 3 timeouts 40 s ago (outside τ = 30 s), path 1: 1 timeout 10 s ago.
    // Rule (3) sees 0 vs 1: path 0 wins despite more timeouts in total.
    assert_eq!(
        pick(
            "rtx-csi",
            &[(9000, 7000, 0, 0.0, 3, 40), (9000, 7000, 0, 0.0, 1, 10)],
            1
        ),
        0
    );
}
