//! Every registered retransmission policy, on random path states and candidate sets:
//! it picks one of the candidates (never a PF / INACTIVE path the core left out), and
//! the same state and random stream give the same pick (results stay deterministic).
//! The loop runs over the registry table, so a newly registered policy is exercised
//! without editing this test.

use cmt_core::rtx::{self, RtxContext};
use cmt_core::{Duration, Params, PathId, PathView, Time};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// (cwnd, ssthresh, flight, loss rate, timeouts, seconds since the last timeout)
type PathState = (u64, u64, u64, f64, u32, u64);

fn path() -> impl Strategy<Value = PathState> {
    (
        1u64..200_000,
        1u64..200_000,
        0u64..100_000,
        0.0f64..0.3,
        0u32..5,
        0u64..100,
    )
}

fn views(ps: &[PathState], now: Time) -> Vec<PathView> {
    ps.iter()
        .enumerate()
        .map(
            |(i, &(cwnd, ssthresh, flight, loss_rate, timeouts, ago))| PathView {
                cwnd,
                ssthresh,
                flight,
                loss_rate,
                timeouts,
                last_timeout: (timeouts > 0).then(|| now - Duration::from_secs(ago)),
                srtt: Some(Duration::from_millis(20 + 10 * i as u64)),
                ..PathView::idle(i)
            },
        )
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn every_policy_picks_a_candidate_deterministically(
        ps in prop::collection::vec(path(), 2..5),
        mask in 1u32..16,
        original in 0usize..4,
        seed in any::<u64>(),
    ) {
        let now = Time::ZERO + Duration::from_secs(200);
        let paths = views(&ps, now);
        let n = paths.len();
        let mut candidates: Vec<PathId> = (0..n).filter(|i| mask >> i & 1 == 1).map(PathId).collect();
        if candidates.is_empty() {
            candidates.push(PathId(0));
        }
        let ctx = RtxContext { now, paths: &paths, candidates: &candidates, original: PathId(original % n), tsn: 7 };
        let names = rtx::names();
        prop_assert!(names.len() >= 7, "the built-in policies are registered");
        for name in &names {
            let pick = |seed| {
                let mut policy = rtx::by_name(name, &Params::default()).unwrap().build();
                policy.select(&ctx, &mut ChaCha8Rng::seed_from_u64(seed))
            };
            let a = pick(seed);
            prop_assert!(candidates.contains(&a), "{name} chose {a:?} outside {candidates:?}");
            prop_assert_eq!(a, pick(seed), "{} is not deterministic", name);
        }
    }
}
