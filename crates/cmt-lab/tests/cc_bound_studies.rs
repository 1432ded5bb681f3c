//! The congestion-control-aware bound is an upper bound for standard congestion control
//! on every study's scenarios: no configuration whose controller halves its window on
//! loss (Reno and the coupled LIA / OLIA / BALIA, which are by design no more aggressive
//! than Reno on any path) measurably exceeds it. "Measurably": the per-run fractions'
//! mean minus its 95 % CI (Student t) lies above 100 %. If this fails, the model is
//! wrong, not the scheduler.
//!
//! Each study sweep runs with the study's own quick settings (its seeds capped at 4),
//! at up to ten grid points spread over its standard-controller configurations.
//! Controllers that do not halve on loss (DB-CMT's D-FRP, CMT-QA*, receiver-driven
//! rates) are left out: the bound does not claim to hold for them, and the study
//! reports show by how much they exceed it.

use cmt_lab::sweep::{Plan, RunSpec};

mod common;

const STANDARD: [&str; 4] = ["reno", "lia", "olia", "balia"];
const POINTS_PER_SWEEP: usize = 10;

/// Two-sided 95 % Student t quantiles for 1–9 degrees of freedom.
fn t95(df: usize) -> f64 {
    [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262,
    ][df.clamp(1, 9) - 1]
}

/// The runs of up to `POINTS_PER_SWEEP` standard-controller grid points of a sweep,
/// spread evenly over the grid, grouped by point.
fn chosen(plan: &Plan) -> Vec<Vec<&RunSpec>> {
    let mut points: Vec<Vec<&RunSpec>> = Vec::new();
    for r in &plan.runs {
        match points.iter_mut().find(|p| p[0].point == r.point) {
            Some(p) => p.push(r),
            None => points.push(vec![r]),
        }
    }
    points.retain(|p| {
        plan.scenario(p[0])
            .is_ok_and(|b| STANDARD.contains(&b.cc.name()))
    });
    let step = points.len().div_ceil(POINTS_PER_SWEEP).max(1);
    points.into_iter().step_by(step).collect()
}

#[test]
fn no_standard_controller_measurably_exceeds_the_cc_aware_bound_on_any_study() {
    let mut checked = 0;
    let mut failures = Vec::new();
    for plan in common::quick_study_plans(4) {
        let points = chosen(&plan);
        let results: Vec<(String, Vec<f64>)> = std::thread::scope(|s| {
            let handles: Vec<_> = points
                .iter()
                .map(|runs| {
                    let plan = &plan;
                    s.spawn(move || {
                        let fractions = runs
                            .iter()
                            .map(|r| {
                                let built = plan.scenario(r).unwrap();
                                cmt_sim::run_built(built).unwrap().goodput_of_cc_bound
                            })
                            .collect();
                        (plan.point_label(&runs[0].point), fractions)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (label, f) in results {
            let n = f.len();
            let mean = f.iter().sum::<f64>() / n as f64;
            let sd =
                (f.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n.max(2) - 1) as f64).sqrt();
            let low = mean - t95(n - 1) * sd / (n as f64).sqrt();
            checked += 1;
            if low > 1.0 {
                failures.push(format!(
                    "{} [{label}]: {:.1} % of the bound (CI low {:.1} %)",
                    plan.name,
                    100.0 * mean,
                    100.0 * low
                ));
            }
        }
    }
    eprintln!("{checked} grid points checked");
    assert!(checked >= 80, "only {checked} grid points checked");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
