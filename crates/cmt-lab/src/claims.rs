//! A study's claims as machine-checkable comparisons, evaluated on the per-seed
//! (paired) differences of a sweep's runs, and their table in the report.

use std::fmt::Write as _;

use serde::Deserialize;

use crate::aggregate::Aggregate;
use crate::error::LabError;
use crate::report::sig;
use crate::stats::Paired;
use crate::sweep::Plan;

/// "metric at point `left` OP metric at point `right`" (or a constant).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// What the paper says, in words.
    pub text: String,
    /// Where the paper says it (figure/table).
    pub paper: String,
    /// Sweep name.
    pub sweep: String,
    /// Metric.
    pub metric: String,
    /// Grid point: axis of the sweep → value. An axis left out is averaged over, per
    /// seed (an "overall" claim).
    pub left: toml::Table,
    /// `>`, `<`, `>=`, `<=` or `~` (within `tolerance`, relative).
    pub op: String,
    /// Grid point compared against …
    #[serde(default)]
    pub right: Option<toml::Table>,
    /// … or a constant.
    #[serde(default)]
    pub right_value: Option<f64>,
    /// Multiplies the right side (e.g. 2 for "about twice").
    #[serde(default)]
    pub factor: Option<f64>,
    /// Relative tolerance of `~` (default 0.1).
    #[serde(default)]
    pub tolerance: Option<f64>,
}

/// Whether a claim is borne out by the per-seed differences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The paired 95 % CI lies on the claimed side.
    Holds,
    /// It lies on the other side.
    Contradicted,
    /// It straddles the boundary: not shown at this number of seeds.
    Unclear,
}

/// One evaluated claim.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// Left mean and CI.
    pub left: (Option<f64>, Option<f64>),
    /// Right mean and CI (CI `None` for a constant), times `factor`.
    pub right: (Option<f64>, Option<f64>),
    /// Per-seed differences `left − factor·right` over the seeds both sides ran (for a
    /// constant right side, the left samples minus it).
    pub paired: Option<Paired>,
    /// What the paired differences say about the claim.
    pub outcome: Option<Outcome>,
}

/// The grid points a selection names. Axes it gives are fixed; an axis it leaves out
/// ranges over all its values, and the claim is about the per-seed mean over them (the
/// papers' "overall" numbers, averaged over a loss sweep).
fn points_of(plan: &Plan, sel: &toml::Table, what: &str) -> Result<Vec<Vec<usize>>, String> {
    if let Some(k) = sel.keys().find(|k| !plan.axes.iter().any(|a| &a.key == *k)) {
        return Err(format!(
            "{what}: `{k}` is not an axis of sweep `{}`",
            plan.name
        ));
    }
    let mut points: Vec<Vec<usize>> = vec![Vec::with_capacity(plan.axes.len())];
    for a in &plan.axes {
        let choices: Vec<usize> = match sel.get(&a.key) {
            Some(v) => vec![a
                .values
                .iter()
                .position(|x| *x == v.to_string())
                .ok_or_else(|| format!("{what}: {v} is not a value of `{}`", a.key))?],
            None => (0..a.values.len()).collect(),
        };
        points = points
            .into_iter()
            .flat_map(|p| {
                choices.iter().map(move |&i| {
                    let mut q = p.clone();
                    q.push(i);
                    q
                })
            })
            .collect();
    }
    Ok(points)
}

/// Per-seed values of one side: the run's value at a single point, else the mean over
/// the points, for the seeds that ran at every one of them.
fn side_samples(agg: &Aggregate, points: &[Vec<usize>], metric: &str) -> Option<Vec<(u64, f64)>> {
    let per_point: Vec<&[(u64, f64)]> = points
        .iter()
        .map(|p| agg.samples(p, metric))
        .collect::<Option<_>>()?;
    let (first, rest) = per_point.split_first()?;
    let n = per_point.len() as f64;
    Some(
        first
            .iter()
            .filter_map(|&(seed, v)| {
                let others: Option<Vec<f64>> = rest
                    .iter()
                    .map(|s| s.iter().find(|(x, _)| *x == seed).map(|(_, v)| *v))
                    .collect();
                Some((seed, (v + others?.iter().sum::<f64>()) / n))
            })
            .collect(),
    )
}

/// Mean and CI of one side: the sweep's statistics at a single point, else those of
/// the per-seed means.
fn side_stat(
    plan: &Plan,
    agg: &Aggregate,
    points: &[Vec<usize>],
    metric: &str,
) -> (Option<f64>, Option<f64>) {
    if let [p] = points {
        return agg
            .stats
            .iter()
            .find(|s| &s.point == p && s.metric == metric)
            .map_or((None, None), |s| (s.mean, s.ci));
    }
    let xs: Vec<f64> = side_samples(agg, points, metric)
        .unwrap_or_default()
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    (
        crate::stats::mean(&xs),
        crate::stats::ci95_half_width(&xs, plan.ci),
    )
}

/// `left − factor·right` per seed, over the seeds both sides have.
fn differences(left: &[(u64, f64)], right: Side<'_>, factor: f64) -> Vec<f64> {
    left.iter()
        .filter_map(|&(seed, l)| match right {
            Side::Samples(r) => r
                .iter()
                .find(|(s, _)| *s == seed)
                .map(|(_, r)| l - factor * r),
            Side::Value(v) => Some(l - factor * v),
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Side<'a> {
    Samples(&'a [(u64, f64)]),
    Value(f64),
}

/// Decides `op` from the paired interval `[lo, hi]` of the differences; `scale` is the
/// right side's mean (for `~`, whose band is `tolerance·|scale|`).
fn outcome(op: &str, p: &Paired, scale: f64, tolerance: f64) -> Result<Outcome, String> {
    let h = p.ci.unwrap_or(0.0);
    let (lo, hi) = (p.mean - h, p.mean + h);
    let zero = lo == 0.0 && hi == 0.0;
    let decide = |holds: bool, contradicted: bool| {
        if holds {
            Outcome::Holds
        } else if contradicted {
            Outcome::Contradicted
        } else {
            Outcome::Unclear
        }
    };
    Ok(match op {
        ">" => decide(lo > 0.0, hi < 0.0 || zero),
        ">=" => decide(lo >= 0.0, hi < 0.0),
        "<" => decide(hi < 0.0, lo > 0.0 || zero),
        "<=" => decide(hi <= 0.0, lo > 0.0),
        "~" => {
            let band = tolerance * scale.abs();
            decide(lo >= -band && hi <= band, lo > band || hi < -band)
        }
        o => return Err(format!("unknown op `{o}` (>, <, >=, <=, ~)")),
    })
}

/// What a sequential sweep's stopping rule watches for a claim: its per-seed
/// difference (or, against a constant, its left side alone).
pub(crate) fn estimate(c: &Claim, plan: &Plan) -> Result<crate::sweep::Estimate, String> {
    Ok(crate::sweep::Estimate {
        metric: c.metric.clone(),
        left: points_of(plan, &c.left, "left")?,
        right: match &c.right {
            Some(sel) => points_of(plan, sel, "right")?,
            None => Vec::new(),
        },
        factor: c.factor.unwrap_or(1.0),
    })
}

/// Evaluates a claim against a finished sweep.
pub fn evaluate(c: &Claim, plan: &Plan, agg: &Aggregate) -> Result<Verdict, String> {
    let lp = points_of(plan, &c.left, "left")?;
    let left = side_stat(plan, agg, &lp, &c.metric);
    let factor = c.factor.unwrap_or(1.0);
    let right_samples;
    let (right, side) = match (&c.right, c.right_value) {
        (Some(sel), None) => {
            let rp = points_of(plan, sel, "right")?;
            let (m, ci) = side_stat(plan, agg, &rp, &c.metric);
            right_samples = side_samples(agg, &rp, &c.metric);
            let side = right_samples.as_deref().map(Side::Samples);
            ((m.map(|m| m * factor), ci.map(|c| c * factor)), side)
        }
        (None, Some(v)) => ((Some(v * factor), None), Some(Side::Value(v))),
        _ => return Err("give exactly one of `right` and `right_value`".into()),
    };
    let diffs = match (side_samples(agg, &lp, &c.metric), side) {
        (Some(l), Some(r)) => differences(&l, r, factor),
        _ => Vec::new(),
    };
    let paired = crate::stats::paired(&diffs, plan.ci);
    let outcome = match (&paired, right.0) {
        (Some(p), Some(scale)) => Some(outcome(&c.op, p, scale, c.tolerance.unwrap_or(0.1))?),
        _ => None,
    };
    Ok(Verdict {
        left,
        right,
        paired,
        outcome,
    })
}

/// The claims table: each claim's verdict in simulation, and over real sockets when
/// that sweep was also run there.
pub(crate) fn claims_table(
    claims: &[Claim],
    done: &[(Plan, Aggregate)],
    real_done: &[(Plan, Aggregate)],
    label: &str,
) -> Result<String, LabError> {
    let mut md = String::new();
    let _ = writeln!(md, "## Claims\n");
    let _ = writeln!(md, "| claim | paper | measured | compared with | difference | paired Δ (95 % CI) | sign test p | holds |\n|---|---|---|---|---|---|---|---|");
    for c in claims {
        let (plan, agg) = done
            .iter()
            .find(|(p, _)| p.name == c.sweep)
            .ok_or_else(|| {
                LabError::at(
                    label,
                    format!("claim `{}`: no sweep named `{}`", c.text, c.sweep),
                )
            })?;
        let v = evaluate(c, plan, agg)
            .map_err(|e| LabError::at(label, format!("claim `{}`: {e}", c.text)))?;
        md += &claim_row(c, &v, "");
        if let Some((_, ragg)) = real_done.iter().find(|(p, _)| p.name == c.sweep) {
            let rv = evaluate(c, plan, ragg)
                .map_err(|e| LabError::at(label, format!("claim `{}`: {e}", c.text)))?;
            if rv.left.0.is_some() {
                md += &claim_row(c, &rv, " — **real sockets**");
            }
        }
    }
    let _ = writeln!(md, "\n\"Difference\" is (measured − compared with) / compared with, on the means. Runs at different grid points share seeds, so each claim is tested on the per-seed differences (measured − compared with): \"paired Δ\" is their mean with its 95 % CI, \"sign test p\" the two-sided exact sign test of their signs. A claim holds when the paired CI lies on the claimed side of zero (for `~`, inside the tolerance band), is contradicted (**no**) when it lies on the other side, and is **unclear** when it straddles the boundary.\n");
    Ok(md)
}

/// One row of the claims table; `suffix` marks rows measured over real sockets.
fn claim_row(c: &Claim, v: &Verdict, suffix: &str) -> String {
    let show = |(m, ci): (Option<f64>, Option<f64>)| match (m, ci) {
        (Some(m), Some(ci)) => format!("{} ± {}", sig(m), sig(ci)),
        (Some(m), None) => sig(m),
        _ => "–".into(),
    };
    let diff = match (v.left.0, v.right.0) {
        (Some(l), Some(r)) if r != 0.0 => format!("{:+.1} %", 100.0 * (l - r) / r.abs()),
        _ => "–".into(),
    };
    let delta = v.paired.map_or("–".into(), |p| match p.ci {
        Some(ci) => format!(
            "{}{} ± {} (n = {})",
            sign(p.mean),
            sig(p.mean.abs()),
            sig(ci),
            p.n
        ),
        None => format!("{}{} (n = {})", sign(p.mean), sig(p.mean.abs()), p.n),
    });
    let p = v.paired.and_then(|p| p.sign_p).map_or("–".into(), |p| {
        if p < 0.001 {
            "< 0.001".into()
        } else {
            format!("{p:.3}")
        }
    });
    let holds = match v.outcome {
        Some(Outcome::Holds) => "yes",
        Some(Outcome::Contradicted) => "**no**",
        Some(Outcome::Unclear) => "**unclear**",
        None => "–",
    };
    format!(
        "| {}{suffix} ({} {}) | {} | {} | {} | {} | {} | {} | {} |\n",
        c.text,
        c.metric,
        c.op,
        c.paper,
        show(v.left),
        show(v.right),
        diff,
        delta,
        p,
        holds
    )
}

fn sign(x: f64) -> &'static str {
    if x < 0.0 {
        "−"
    } else {
        "+"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sweep::CiMethod;

    fn p(mean: f64, ci: f64) -> Paired {
        Paired {
            n: 10,
            mean,
            ci: Some(ci),
            sign_p: None,
        }
    }

    #[test]
    fn a_claim_holds_only_when_the_paired_interval_is_on_its_side() {
        let o = |op: &str, m: f64, ci: f64| outcome(op, &p(m, ci), 10.0, 0.1).unwrap();
        assert_eq!(o(">", 1.0, 0.5), Outcome::Holds);
        assert_eq!(o(">", 0.2, 0.5), Outcome::Unclear);
        assert_eq!(o(">", -1.0, 0.5), Outcome::Contradicted);
        assert_eq!(
            o(">", 0.0, 0.0),
            Outcome::Contradicted,
            "equal is not above"
        );
        assert_eq!(o(">=", 0.0, 0.0), Outcome::Holds);
        assert_eq!(o("<", -1.0, 0.5), Outcome::Holds);
        assert_eq!(o("<=", 0.3, 0.2), Outcome::Contradicted);
        // `~` with tolerance 0.1 of a right side of 10: the band is ±1.
        assert_eq!(o("~", 0.2, 0.5), Outcome::Holds);
        assert_eq!(o("~", 0.8, 0.5), Outcome::Unclear);
        assert_eq!(o("~", 2.0, 0.5), Outcome::Contradicted);
        assert!(outcome("=", &p(0.0, 0.0), 1.0, 0.1).is_err());
    }

    #[test]
    fn pairing_by_seed_sees_a_small_steady_difference_that_unpaired_intervals_hide() {
        // Seeds vary a lot (10, 20, 30), the difference is always +1: unpaired 95 % CIs
        // of both sides overlap almost entirely, the paired differences have no spread.
        let left = [(1, 11.0), (2, 21.0), (3, 31.0)];
        let right = [(3, 30.0), (1, 10.0), (2, 20.0)];
        let d = differences(&left, Side::Samples(&right), 1.0);
        assert_eq!(d, vec![1.0, 1.0, 1.0]);
        let pd = crate::stats::paired(&d, CiMethod::T).unwrap();
        assert_eq!(outcome(">", &pd, 20.0, 0.1).unwrap(), Outcome::Holds);
        // A seed only one side ran is left out; a constant right side pairs every seed.
        assert_eq!(
            differences(&left, Side::Samples(&right[..1]), 1.0),
            vec![1.0]
        );
        assert_eq!(
            differences(&left, Side::Value(10.0), 2.0),
            vec![-9.0, 1.0, 11.0]
        );
    }
}
