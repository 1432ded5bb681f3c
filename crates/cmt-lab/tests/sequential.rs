//! Sequential replication (`seeds = { min, max, batch, half_width }`): the stopping
//! rule on forged results whose spread is known (it adds seeds where an interval is
//! too wide, pairs comparisons by seed, ignores on which side of zero an estimate lies),
//! and end to end: the same seeds and byte-identical outputs with any number of jobs,
//! shards run into one directory or merged, and resumed runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[path = "common/sweep_dir.rs"]
mod sweep_dir;

use cmt_lab::sweep::{select, Plan, Results, RunSpec};
use sweep_dir::{outputs, BASE};

fn tmp(name: &str) -> PathBuf {
    sweep_dir::tmp("seq", name)
}

/// A two-point sweep (`receiver.rbuf` 16 KB vs 64 KB) with the given `seeds` table and
/// a comparison of goodput against 16 KB.
fn plan(dir: &Path, seeds: &str) -> Result<Plan, String> {
    std::fs::write(dir.join("base.toml"), BASE).unwrap();
    let sweep = format!(
        r#"
name = "seq"
base = "base.toml"
seeds = {seeds}
metrics = ["goodput_mbps"]
[[axes]]
key = "receiver.rbuf"
values = ["16KB", "64KB"]
[[comparisons]]
metric = "goodput_mbps"
axis = "receiver.rbuf"
baseline = "16KB"
kind = "advantage"
"#
    );
    let p = dir.join("seq.toml");
    std::fs::write(&p, sweep).unwrap();
    Plan::load(&p).map_err(|e| e.to_string())
}

/// Forged results: goodput of a run at grid point `p` with seed `s` is `f(p, s)`.
struct Forged(fn(usize, u64) -> f64);

impl Results for Forged {
    fn has(&self, _: &RunSpec) -> bool {
        true
    }
    fn value(&self, r: &RunSpec, _: &str) -> Option<f64> {
        Some((self.0)(r.point[0], r.seed))
    }
}

/// A fixed pseudo-random spread in [−1, 1] per seed.
fn spread(seed: u64) -> f64 {
    let x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 11;
    (x as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

fn seeds_used(plan: &Plan, results: &dyn Results) -> Vec<usize> {
    select(plan, results).seeds.values().copied().collect()
}

#[test]
fn a_point_whose_mean_is_already_precise_stops_at_min_and_a_noisy_one_grows_to_max() {
    let d = tmp("grow");
    let p = plan(&d, r#"{ min = 3, max = 12, batch = 3, half_width = "2%" }"#).unwrap();
    assert_eq!(p.runs.len(), 2 * 12, "the plan holds every seed it may use");
    // Loss-free-like point 0 (constant), noisy point 1 (±50 % of the mean); the
    // comparison's differences are noisy too.
    let s = select(
        &p,
        &Forged(|pt, s| if pt == 0 { 5.0 } else { 5.0 + 2.5 * spread(s) }),
    );
    assert_eq!(s.seeds.values().copied().collect::<Vec<_>>(), vec![12, 12]);
    assert_eq!(
        s.at_max.len(),
        2,
        "both stopped by max, so both are reported"
    );
    assert!(s.missing.is_empty());
    assert_eq!(s.runs.len(), 24);
    // Both constant: nothing to add.
    let s = select(&p, &Forged(|pt, _| 5.0 + pt as f64));
    assert_eq!(s.seeds.values().copied().collect::<Vec<_>>(), vec![3, 3]);
    assert!(s.at_max.is_empty());
    assert_eq!(s.runs.len(), 6, "seeds 1–3 at both points");
}

#[test]
fn a_comparison_is_judged_on_paired_differences() {
    let d = tmp("paired");
    let rule = r#"{ min = 3, max = 30, batch = 3, half_width = "2%", metrics = [] }"#;
    let p = plan(&d, rule).unwrap();
    // Both points swing by ±20 % with the seed, together: the difference is a steady
    // +1, precise at once, though neither mean is.
    let together = Forged(|pt, s| 5.0 + pt as f64 + spread(s));
    assert_eq!(seeds_used(&p, &together), vec![3, 3]);
    // The same swings, independent at the two points: the differences are as noisy as
    // the points, so seeds are added in batches of 3.
    let apart = Forged(|pt, s| 5.0 + pt as f64 + spread(s * (pt as u64 + 1) + 7));
    let used = seeds_used(&p, &apart);
    assert!(used[0] > 3 && used[0].is_multiple_of(3), "{used:?}");
    assert_eq!(used[0], used[1], "both sides of a pair get the same seeds");
}

#[test]
fn the_rule_looks_at_the_width_of_an_interval_never_at_its_side() {
    let d = tmp("side");
    let rule = r#"{ min = 4, max = 40, batch = 4, half_width = "5%", metrics = [] }"#;
    let p = plan(&d, rule).unwrap();
    // 64 KB better by 10 % or worse by 10 %, with the same per-seed noise: a rule that
    // stopped on significance would treat them differently.
    let better = Forged(|pt, s| 10.0 + if pt == 1 { 1.0 + spread(s) } else { 0.0 });
    let worse = Forged(|pt, s| 10.0 + if pt == 1 { -1.0 + spread(s) } else { 0.0 });
    let (b, w) = (seeds_used(&p, &better), seeds_used(&p, &worse));
    assert_eq!(b, w);
    assert!(b[0] > 4, "the noise needs more than the first batch: {b:?}");
}

#[test]
fn a_claim_adds_seeds_until_its_verdict_is_decided_and_no_further() {
    use cmt_lab::sweep::{Decision, Estimate};
    use cmt_lab::verdict::Op;
    let d = tmp("decide");
    // No precision target: only the claim (64 KB above 16 KB) adds seeds.
    let mut p = plan(&d, r#"{ min = 4, max = 40, batch = 4, metrics = [] }"#).unwrap();
    p.sequential.as_mut().unwrap().claims = vec![Estimate {
        metric: "goodput_mbps".into(),
        left: vec![vec![1]],
        right: vec![vec![0]],
        factor: 1.0,
        decision: Some(Decision {
            op: Op::Gt,
            paper: None,
            paper_tolerance: 0.0,
            constant: None,
        }),
        left_base: Vec::new(),
        right_base: Vec::new(),
    }];
    // A difference of +1 with a spread of ±0.1: decided by the first four seeds.
    let clear = Forged(|pt, s| 5.0 + if pt == 1 { 1.0 + 0.1 * spread(s) } else { 0.0 });
    assert_eq!(seeds_used(&p, &clear), vec![4, 4]);
    // No difference under ±1 noise: never decided, so it runs to the maximum.
    let none = Forged(|pt, s| 5.0 + if pt == 1 { spread(s * 3 + 1) } else { 0.0 });
    let s = select(&p, &none);
    assert_eq!(s.seeds.values().copied().collect::<Vec<_>>(), vec![40, 40]);
    assert_eq!(s.at_max.len(), 2);
    // A difference of +0.4 under the same noise: more than four seeds, fewer than 40.
    let small = Forged(|pt, s| {
        5.0 + if pt == 1 {
            0.4 + spread(s * 3 + 1)
        } else {
            0.0
        }
    });
    let used = seeds_used(&p, &small);
    assert!(used[0] > 4 && used[0] < 40, "{used:?}");
}

#[test]
fn later_stages_wait_for_every_result_of_the_current_one() {
    let d = tmp("stage");
    let p = plan(&d, r#"{ min = 3, max = 12, batch = 3, half_width = "2%" }"#).unwrap();
    struct Partial;
    impl Results for Partial {
        fn has(&self, r: &RunSpec) -> bool {
            r.seed != 2
        }
        fn value(&self, r: &RunSpec, _: &str) -> Option<f64> {
            self.has(r).then(|| 5.0 + spread(r.seed))
        }
    }
    let s = select(&p, &Partial);
    assert!(!s.settled());
    let missing: Vec<u64> = s.missing.iter().map(|&i| p.runs[i].seed).collect();
    assert_eq!(
        missing,
        vec![2, 2],
        "seed 2 at both points, nothing beyond stage one"
    );
    assert_eq!(s.runs.len(), 6);
}

/// Runs the plan (this shard of it); whether every run it needs is done.
fn run(plan: &Plan, out: &Path, jobs: usize, shard: Option<(usize, usize)>) -> bool {
    sweep_dir::run(plan, out, jobs, shard).complete
}

#[test]
fn the_same_seeds_and_outputs_with_any_jobs_shards_or_merge() {
    let d = tmp("e2e");
    // A 0.1 % target that random loss never lets 8 seeds meet: every stage runs
    // (2, 4, 6, 8 seeds), so the shards below meet every stage boundary.
    let p = plan(
        &d,
        r#"{ min = 2, max = 8, batch = 2, half_width = "0.1%" }"#,
    )
    .unwrap();
    assert!(run(&p, &d.join("j1"), 1, None));
    assert!(run(&p, &d.join("j2"), 2, None));
    assert_eq!(outputs(&d.join("j1")), outputs(&d.join("j2")));
    let report = std::fs::read_to_string(d.join("j1/report.md")).unwrap();
    assert!(
        report.contains("Seeds by sequential replication")
            && report.contains("2 grid point(s) stopped at 8 seeds"),
        "{report}"
    );
    let rows = std::fs::read_to_string(d.join("j1/results.csv")).unwrap();
    assert_eq!(rows.lines().count() - 1, 16);

    // Two shards taking turns in one directory (a shared file system): each runs its
    // part of a stage and stops when the next stage needs the other's results.
    let shared = d.join("shared");
    let mut turns = 0;
    while !(run(&p, &shared, 1, Some((0, 2))) & run(&p, &shared, 1, Some((1, 2)))) {
        turns += 1;
        assert!(turns < 10, "bounded by the number of stages");
    }
    assert_eq!(outputs(&shared), outputs(&d.join("j1")));

    // Shards in separate directories: merge what they ran, then run the sweep into the
    // merged directory to go on; the result is the same.
    for i in 0..2 {
        run(&p, &d.join(format!("s{i}")), 1, Some((i, 2)));
    }
    let dirs = [d.join("s0"), d.join("s1")];
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    let merged = d.join("merged");
    match cmt_lab::merge::merge(&refs, &merged) {
        Ok(_) => {}
        Err(e) => assert!(e.to_string().contains("run the sweep"), "{e}"),
    }
    assert!(run(&p, &merged, 2, None));
    assert_eq!(outputs(&merged), outputs(&d.join("j1")));
}

#[test]
fn the_seeds_a_grid_point_used_are_a_prefix_shared_with_its_comparison() {
    let d = tmp("prefix");
    let p = plan(&d, r#"{ min = 2, max = 8, batch = 2, half_width = "3%" }"#).unwrap();
    assert!(run(&p, &d.join("o"), 2, None));
    let rows = std::fs::read_to_string(d.join("o/results.csv")).unwrap();
    let mut by: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for l in rows.lines().skip(1) {
        let c: Vec<&str> = l.split(',').collect();
        by.entry(c[3].to_string())
            .or_default()
            .push(c[2].parse().unwrap());
    }
    for seeds in by.values() {
        let n = seeds.len() as u64;
        assert_eq!(*seeds, (1..=n).collect::<Vec<_>>());
    }
}

#[test]
fn bad_sequential_seeds_name_the_problem() {
    let d = tmp("bad");
    for (seeds, want) in [
        (
            r#"{ min = 1, max = 5, batch = 1, half_width = "2%" }"#,
            "at least 2 seeds",
        ),
        (
            r#"{ min = 5, max = 3, batch = 1, half_width = "2%" }"#,
            "below min",
        ),
        (
            r#"{ min = 2, max = 5, batch = 0, half_width = "2%" }"#,
            "batch = 0",
        ),
        (
            r#"{ min = 2, max = 5, batch = 1, half_width = "0%" }"#,
            "relative precision",
        ),
        (
            r#"{ min = 2, max = 5, batch = 1, half_width = "wide" }"#,
            "relative precision",
        ),
        (
            r#"{ min = 2, max = 5, batch = 1, half_width = 0.1, metrics = ["nope"] }"#,
            "unknown metric `nope`",
        ),
        (
            r#"{ min = 2, max = 5, batch = 1, half_width = 0.1, until = "holds" }"#,
            "seeds",
        ),
    ] {
        let err = plan(&d, seeds).unwrap_err();
        assert!(err.contains(want), "{seeds}: {err}");
    }
}
