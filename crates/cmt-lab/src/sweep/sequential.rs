//! Sequential replication: every grid point runs `min` seeds; then, stage by stage,
//! every estimate that is not yet settled gets `batch` more seeds at each grid point it
//! involves, until all are settled or have `max` seeds.
//!
//! Two kinds of estimate, two stopping rules:
//!
//! * **precision** (Law & Kelton, *Simulation Modeling and Analysis*, the sequential
//!   procedure for a relative precision): each grid point's mean of the precision
//!   metrics, and each comparison of the sweep on its per-seed differences, is settled
//!   once its 95 % CI half-width is at most `half_width` × its scale (the compared-with
//!   side's mean). This rule looks at the width of an interval only, never at its
//!   position.
//! * **decision**: a study's claim on this sweep is settled once its verdict is decided
//!   ([`crate::verdict`]: nothing within 1.5 half-widths of the boundary that decides
//!   it). Looking at the position is what a decision needs; the 1.5 half-width margin
//!   keeps the chance of calling a direction that is not there below that of a single
//!   95 % test (measured in `verdict.rs`), and a claim still undecided at `max` seeds
//!   is printed as undecided, not as a verdict.
//!
//! Seeds are always the sweep's seeds 1, 2, … in order, the same at every grid point, so
//! comparisons pair by seed over the common prefix. The rule reads only run results,
//! which are deterministic: the same sweep ends with the same seeds at every point
//! whatever the number of jobs or shards.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::plan::{Plan, RunSpec};
use super::spec::SequentialSpec;
use crate::stats::ci95_half_width;

/// The stopping rule of a sequential sweep, as planned.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Sequential {
    /// Seeds every grid point runs first.
    pub min: usize,
    /// Most seeds a grid point runs.
    pub max: usize,
    /// Seeds added at a time.
    pub batch: usize,
    /// Target CI half-width as a fraction of the estimate's scale (`None`: no precision
    /// target; only the claims' decisions add seeds).
    pub half_width: Option<f64>,
    /// Metrics whose per-point means must reach the target.
    pub metrics: Vec<String>,
    /// Paired estimates added by a study (its claims on this sweep).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub claims: Vec<Estimate>,
}

/// One estimate the rule watches: per seed, the mean of `metric` over `left` minus
/// `factor` × its mean over `right` (or only the left mean when `right` is empty).
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Estimate {
    /// Metric.
    pub metric: String,
    /// Grid points averaged on the left.
    pub left: Vec<Vec<usize>>,
    /// Grid points averaged on the right (compared with).
    pub right: Vec<Vec<usize>>,
    /// Multiplies the right side.
    pub factor: f64,
    /// A claim's test: settled when its verdict is decided (`None`: a precision target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// Grid points subtracted from the left side, per seed (a claim about changes).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub left_base: Vec<Vec<usize>>,
    /// Likewise from the right side.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub right_base: Vec<Vec<usize>>,
}

/// What a claim tests, for the decision rule ([`crate::verdict`]).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct Decision {
    /// The claimed relation.
    pub op: crate::verdict::Op,
    /// The paper's value, if it prints one.
    pub paper: Option<crate::verdict::PaperSize>,
    /// The stated tolerance around it, in the paper's scale (0 for none).
    pub paper_tolerance: f64,
    /// The constant a claim compares with (its `right_value`), when it has no right
    /// grid points.
    pub constant: Option<f64>,
}

impl Decision {
    /// The test in the differences' units, for a right side of mean `right` (unscaled)
    /// multiplied by `factor`.
    pub fn test(&self, right: f64, factor: f64) -> crate::verdict::Test {
        use crate::verdict::{Op, Test};
        Test {
            op: self.op,
            paper: self.paper.map(|p| p.expected_difference(right, factor)),
            paper_tolerance: self
                .paper
                .map_or(0.0, |p| p.tolerance_in_units(self.paper_tolerance, right)),
            band: match self.op {
                Op::Approx(t) => t * (factor * right).abs(),
                _ => 0.0,
            },
        }
    }
}

impl Sequential {
    /// The rule of a checked spec; `metrics` when the spec names none.
    pub(super) fn new(s: &SequentialSpec, metrics: &[String]) -> Sequential {
        Sequential {
            min: s.min as usize,
            max: s.max as usize,
            batch: s.batch as usize,
            half_width: s.half_width_fraction().expect("checked"),
            metrics: s.metrics.clone().unwrap_or_else(|| metrics.to_vec()),
            claims: Vec::new(),
        }
    }
}

/// Which runs a sweep needs, given the results so far.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// Plan indexes of the runs needed so far (the current stage's included), in order.
    pub runs: Vec<usize>,
    /// Those of them without a result yet: while any is left, later stages are unknown.
    pub missing: Vec<usize>,
    /// Seeds each grid point uses so far.
    pub seeds: BTreeMap<Vec<usize>, usize>,
    /// Grid points that stopped at `max` with an estimate still above the target.
    pub at_max: Vec<Vec<usize>>,
}

impl Selection {
    /// Every needed run has a result and no estimate asks for more.
    pub fn settled(&self) -> bool {
        self.missing.is_empty()
    }
}

/// The results a selection looks at.
pub trait Results {
    /// Whether run `r` has a result.
    fn has(&self, r: &RunSpec) -> bool;
    /// Its value of `metric` (`None` without a result or a value).
    fn value(&self, r: &RunSpec, metric: &str) -> Option<f64>;
}

/// Run summaries by plan index.
impl Results for BTreeMap<usize, cmt_sim::Summary> {
    fn has(&self, r: &RunSpec) -> bool {
        self.contains_key(&r.index)
    }
    fn value(&self, r: &RunSpec, metric: &str) -> Option<f64> {
        self.get(&r.index)?.metric(metric).filter(|v| v.is_finite())
    }
}

/// Runs of each grid point in seed order.
fn runs_by_point(plan: &Plan) -> BTreeMap<&[usize], Vec<&RunSpec>> {
    let mut by: BTreeMap<&[usize], Vec<&RunSpec>> = BTreeMap::new();
    for r in &plan.runs {
        by.entry(&r.point[..]).or_default().push(r);
    }
    by
}

/// The runs `plan` needs given the results known so far. A plan with fixed seeds needs
/// all its runs.
pub fn select(plan: &Plan, results: &dyn Results) -> Selection {
    let by = runs_by_point(plan);
    let has = |r: &RunSpec| results.has(r);
    let Some(rule) = &plan.sequential else {
        return Selection {
            runs: plan.runs.iter().map(|r| r.index).collect(),
            missing: plan
                .runs
                .iter()
                .filter(|r| !has(r))
                .map(|r| r.index)
                .collect(),
            seeds: by.iter().map(|(p, rs)| (p.to_vec(), rs.len())).collect(),
            at_max: Vec::new(),
        };
    };
    let points: Vec<&[usize]> = by.keys().copied().collect();
    let estimates = estimates(plan, rule, &points);
    let mut n: BTreeMap<&[usize], usize> = by.keys().map(|p| (*p, rule.min)).collect();
    loop {
        let needed: Vec<&RunSpec> = by
            .iter()
            .flat_map(|(p, rs)| rs.iter().take(n[p]).copied())
            .collect();
        let mut runs: Vec<usize> = needed.iter().map(|r| r.index).collect();
        runs.sort_unstable();
        let mut missing: Vec<usize> = needed.iter().filter(|r| !has(r)).map(|r| r.index).collect();
        missing.sort_unstable();
        let seeds = n.iter().map(|(p, k)| (p.to_vec(), *k)).collect();
        if !missing.is_empty() {
            return Selection {
                runs,
                missing,
                seeds,
                at_max: Vec::new(),
            };
        }
        let (next, at_max) = next_stage(rule, &estimates, &by, &n, results);
        if next == n {
            return Selection {
                runs,
                missing,
                seeds,
                at_max: at_max.into_iter().map(<[usize]>::to_vec).collect(),
            };
        }
        n = next;
    }
}

/// Every estimate of the rule: each point's mean of each precision metric, each sweep
/// comparison's paired difference, and the claims the study added.
fn estimates(plan: &Plan, rule: &Sequential, points: &[&[usize]]) -> Vec<Estimate> {
    let mut out = Vec::new();
    if rule.half_width.is_none() {
        // No precision target: only the claims' decisions add seeds.
        out.extend(rule.claims.iter().cloned());
        return out;
    }
    for p in points {
        for m in &rule.metrics {
            out.push(Estimate {
                metric: m.clone(),
                left: vec![p.to_vec()],
                right: Vec::new(),
                factor: 1.0,
                decision: None,
                left_base: Vec::new(),
                right_base: Vec::new(),
            });
        }
    }
    for c in &plan.comparisons {
        let Some(ai) = plan.axes.iter().position(|a| a.key == c.axis) else {
            continue;
        };
        let Some(bi) = plan.axes[ai]
            .values
            .iter()
            .position(|v| *v == c.baseline.to_string())
        else {
            continue;
        };
        for p in points.iter().filter(|p| p[ai] != bi) {
            let mut base = p.to_vec();
            base[ai] = bi;
            out.push(Estimate {
                metric: c.metric.clone(),
                left: vec![p.to_vec()],
                right: vec![base],
                factor: 1.0,
                decision: None,
                left_base: Vec::new(),
                right_base: Vec::new(),
            });
        }
    }
    out.extend(rule.claims.iter().cloned());
    out
}

type Counts<'p> = BTreeMap<&'p [usize], usize>;

/// The seeds each point needs next, and the points held back only by `max`.
fn next_stage<'p>(
    rule: &Sequential,
    estimates: &[Estimate],
    by: &BTreeMap<&'p [usize], Vec<&RunSpec>>,
    n: &Counts<'p>,
    results: &dyn Results,
) -> (Counts<'p>, Vec<&'p [usize]>) {
    let mut next = n.clone();
    let mut at_max: Vec<&'p [usize]> = Vec::new();
    for e in estimates {
        let all = e.left.len() + e.right.len() + e.left_base.len() + e.right_base.len();
        let points: Vec<&'p [usize]> = e
            .left
            .iter()
            .chain(&e.right)
            .chain(&e.left_base)
            .chain(&e.right_base)
            .filter_map(|p| by.get_key_value(&p[..]).map(|(k, _)| *k))
            .collect();
        if points.len() != all {
            continue;
        }
        let common = points.iter().map(|p| n[p]).min().unwrap_or(0);
        if precise(rule, e, (by, common), results) {
            continue;
        }
        for p in points {
            if common >= rule.max {
                at_max.push(p);
            } else {
                let want = (common + rule.batch).min(rule.max);
                let k = next.get_mut(p).expect("a point of the plan");
                *k = (*k).max(want);
            }
        }
    }
    at_max.sort_unstable();
    at_max.dedup();
    (next, at_max)
}

/// Whether estimate `e` over the first `k` seeds is settled: its verdict decided (a
/// claim), or its CI half-width within the target. Seeds where some point has no value
/// are left out; an estimate with no value at any seed (a metric a run does not define)
/// asks for nothing.
fn precise(
    rule: &Sequential,
    e: &Estimate,
    (by, k): (&BTreeMap<&[usize], Vec<&RunSpec>>, usize),
    results: &dyn Results,
) -> bool {
    let mean = |points: &[Vec<usize>], j: usize| -> Option<f64> {
        let mut sum = 0.0;
        for p in points {
            sum += results.value(by[&p[..]][j], &e.metric)?;
        }
        Some(sum / points.len() as f64)
    };
    // A side, less its base for a claim about changes.
    let side = |points: &[Vec<usize>], base: &[Vec<usize>], j: usize| -> Option<f64> {
        let v = mean(points, j)?;
        if base.is_empty() {
            Some(v)
        } else {
            Some(v - mean(base, j)?)
        }
    };
    let mut diffs = Vec::with_capacity(k);
    let mut scale = Vec::with_capacity(k);
    let mut rights = Vec::with_capacity(k);
    for j in 0..k {
        let Some(l) = side(&e.left, &e.left_base, j) else {
            continue;
        };
        if e.right.is_empty() {
            diffs.push(l);
            scale.push(l);
        } else if let Some(r) = side(&e.right, &e.right_base, j) {
            diffs.push(l - e.factor * r);
            scale.push(e.factor * r);
            rights.push(r);
        }
    }
    if diffs.is_empty() {
        return true;
    }
    // Student-t whatever the sweep reports with: a normal quantile at a handful of seeds
    // would understate the width the rule stops on.
    let h = ci95_half_width(&diffs, super::CiMethod::T);
    if let Some(d) = &e.decision {
        // A claim against a constant compares the left side itself with it.
        let (m, right) = match crate::stats::mean(&rights) {
            Some(r) => (crate::stats::mean(&diffs).unwrap_or(0.0), r),
            None => {
                let c = d.constant.unwrap_or(0.0);
                (crate::stats::mean(&diffs).unwrap_or(0.0) - e.factor * c, c)
            }
        };
        return crate::verdict::judge(&d.test(right, e.factor), m, h)
            != crate::verdict::Verdict::Undecided;
    }
    let (Some(h), Some(target)) = (h, rule.half_width) else {
        return false;
    };
    let scale = crate::stats::mean(&scale).unwrap_or(0.0).abs();
    h <= target * scale
}
