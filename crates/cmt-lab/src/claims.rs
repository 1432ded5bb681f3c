//! A study's claims as machine-checkable comparisons, evaluated on the per-seed
//! (paired) differences of a sweep's runs, and their table in the report.

use std::fmt::Write as _;

use serde::Deserialize;

use crate::aggregate::Aggregate;
use crate::error::LabError;
use crate::report::sig;
use crate::stats::Paired;
use crate::sweep::{CiMethod, Decision, Plan};
use crate::verdict::{judge, Op, PaperSize, Verdict};

/// "metric at point `left` OP metric at point `right`" (or a constant), with the size
/// the paper gives it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// What the paper says, in words.
    pub text: String,
    /// Where the paper says it (figure/table) and what it prints.
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
    /// A claim about changes: per seed, `left` minus this grid point (e.g. a scheme under
    /// triple jitter minus the same scheme under the base jitter) …
    #[serde(default)]
    pub left_base: Option<toml::Table>,
    /// Grid point compared against …
    #[serde(default)]
    pub right: Option<toml::Table>,
    /// … and `right` minus this one: "left changes more than right".
    #[serde(default)]
    pub right_base: Option<toml::Table>,
    /// … or a constant.
    #[serde(default)]
    pub right_value: Option<f64>,
    /// Multiplies the right side (e.g. 2 for "about twice").
    #[serde(default)]
    pub factor: Option<f64>,
    /// Relative tolerance of `~` (default 0.1).
    #[serde(default)]
    pub tolerance: Option<f64>,
    /// The paper's value of the claim, in `paper_scale` (59.02 for "+59.02 %"); none
    /// when the paper gives only a direction.
    #[serde(default)]
    pub paper_value: Option<f64>,
    /// `percent` (of the compared-with side, the default), `ratio`, `difference` (in the
    /// metric's unit) or `value` (the measured side's own value).
    #[serde(default)]
    pub paper_scale: Option<String>,
    /// How far from the paper's value still reproduces it, in `paper_scale`.
    #[serde(default)]
    pub paper_tolerance: Option<f64>,
    /// Why `tolerance` or `paper_tolerance` is what it is: written with the claim, before
    /// the run (required with either).
    #[serde(default)]
    pub tolerance_reason: Option<String>,
}

impl Claim {
    /// What the claim tests: its relation, the paper's value and the stated tolerance.
    pub fn decision(&self) -> Result<Decision, String> {
        if (self.tolerance.is_some() || self.paper_tolerance.is_some())
            && self.tolerance_reason.as_deref().is_none_or(str::is_empty)
        {
            return Err("a tolerance needs its `tolerance_reason`".into());
        }
        if self.paper_scale.is_some() && self.paper_value.is_none() {
            return Err("`paper_scale` without a `paper_value`".into());
        }
        if self.paper_tolerance.is_some() && self.paper_value.is_none() {
            return Err("`paper_tolerance` without a `paper_value`".into());
        }
        if self.left_base.is_some() != self.right_base.is_some() {
            return Err("a claim about changes gives both `left_base` and `right_base`".into());
        }
        let op = Op::parse(&self.op, self.tolerance.unwrap_or(0.1))?;
        let paper = self
            .paper_value
            .map(|v| PaperSize::parse(self.paper_scale.as_deref().unwrap_or("percent"), v))
            .transpose()?;
        Ok(Decision {
            op,
            paper,
            paper_tolerance: self.paper_tolerance.unwrap_or(0.0),
            constant: self.right_value,
        })
    }
}

/// One evaluated claim.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// Left mean and CI.
    pub left: (Option<f64>, Option<f64>),
    /// Right mean and CI (CI `None` for a constant), times `factor`.
    pub right: (Option<f64>, Option<f64>),
    /// Per-seed differences `left − factor·right` over the seeds both sides ran (for a
    /// constant right side, the left samples minus it), with a Student-t interval.
    pub paired: Option<Paired>,
    /// The verdict in size ([`crate::verdict`]).
    pub verdict: Option<Verdict>,
    /// A claim about changes (`left_base`, `right_base`): differences are shown in the
    /// metric's unit.
    pub changes: bool,
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

/// Per-seed values of a side given by `sel`, less those of `base` when given (a claim
/// about changes).
fn side_of(
    plan: &Plan,
    agg: &Aggregate,
    (sel, base): (&toml::Table, Option<&toml::Table>),
    metric: &str,
    what: &str,
) -> Result<Option<Vec<(u64, f64)>>, String> {
    let values = side_samples(agg, &points_of(plan, sel, what)?, metric);
    let Some(base) = base else {
        return Ok(values);
    };
    let base = side_samples(
        agg,
        &points_of(plan, base, &format!("{what}_base"))?,
        metric,
    );
    Ok(match (values, base) {
        (Some(v), Some(b)) => Some(
            v.iter()
                .filter_map(|&(seed, x)| {
                    b.iter()
                        .find(|(s, _)| *s == seed)
                        .map(|&(_, y)| (seed, x - y))
                })
                .collect(),
        ),
        _ => None,
    })
}

/// Mean and 95 % t interval of one side's per-seed values.
fn side_stat(xs: &[(u64, f64)]) -> (Option<f64>, Option<f64>) {
    let v: Vec<f64> = xs.iter().map(|&(_, x)| x).collect();
    (
        crate::stats::mean(&v),
        crate::stats::ci95_half_width(&v, CiMethod::T),
    )
}

/// The samples of `xs` whose seed `other` has too.
fn common(xs: &[(u64, f64)], other: &[(u64, f64)]) -> Vec<(u64, f64)> {
    xs.iter()
        .filter(|(s, _)| other.iter().any(|(o, _)| o == s))
        .copied()
        .collect()
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

/// What a sequential sweep's stopping rule watches for a claim: its per-seed
/// difference (or, against a constant, its left side alone), settled when its verdict
/// is decided.
pub(crate) fn estimate(c: &Claim, plan: &Plan) -> Result<crate::sweep::Estimate, String> {
    let points = |sel: &Option<toml::Table>, what: &str| match sel {
        Some(sel) => points_of(plan, sel, what),
        None => Ok(Vec::new()),
    };
    Ok(crate::sweep::Estimate {
        metric: c.metric.clone(),
        left: points_of(plan, &c.left, "left")?,
        right: points(&c.right, "right")?,
        factor: c.factor.unwrap_or(1.0),
        decision: Some(c.decision()?),
        left_base: points(&c.left_base, "left_base")?,
        right_base: points(&c.right_base, "right_base")?,
    })
}

/// The grid points a claim needs, left and right.
pub(crate) fn claim_points(c: &Claim, plan: &Plan) -> Result<Vec<Vec<usize>>, String> {
    let mut points = points_of(plan, &c.left, "left")?;
    for (sel, what) in [
        (&c.right, "right"),
        (&c.left_base, "left_base"),
        (&c.right_base, "right_base"),
    ] {
        if let Some(sel) = sel {
            points.extend(points_of(plan, sel, what)?);
        }
    }
    Ok(points)
}

/// Evaluates a claim against a finished sweep: paired differences with a Student-t
/// interval whatever the sweep reports with, and the verdict in size.
pub fn evaluate(c: &Claim, plan: &Plan, agg: &Aggregate) -> Result<Evaluation, String> {
    let decision = c.decision()?;
    let factor = c.factor.unwrap_or(1.0);
    let left = side_of(
        plan,
        agg,
        (&c.left, c.left_base.as_ref()),
        &c.metric,
        "left",
    )?;
    let right = match (&c.right, c.right_value) {
        (Some(sel), None) => side_of(plan, agg, (sel, c.right_base.as_ref()), &c.metric, "right")?,
        (None, Some(_)) if c.right_base.is_none() => None,
        _ => {
            return Err(
                "give exactly one of `right` and `right_value` (`right_base` goes with `right`)"
                    .into(),
            )
        }
    };
    // Every figure of the row comes from the seeds both sides ran.
    let (left, right) = match (left, right) {
        (Some(l), Some(r)) => (Some(common(&l, &r)), Some(common(&r, &l))),
        (l, r) => (l, r),
    };
    let left_stat = left.as_deref().map_or((None, None), side_stat);
    let (right_stat, right_mean, side) = match (&right, c.right_value) {
        (Some(r), _) => {
            let (m, ci) = side_stat(r);
            (
                (m.map(|m| m * factor), ci.map(|c| c * factor)),
                m,
                Some(Side::Samples(r)),
            )
        }
        (None, Some(v)) => ((Some(v * factor), None), Some(v), Some(Side::Value(v))),
        (None, None) => ((None, None), None, None),
    };
    let diffs = match (&left, side) {
        (Some(l), Some(r)) => differences(l, r, factor),
        _ => Vec::new(),
    };
    let paired = crate::stats::paired(&diffs, CiMethod::T);
    let verdict = match (&paired, right_mean) {
        (Some(p), Some(r)) => Some(judge(&decision.test(r, factor), p.mean, p.ci)),
        _ => None,
    };
    Ok(Evaluation {
        left: left_stat,
        right: right_stat,
        paired,
        verdict,
        changes: c.left_base.is_some(),
    })
}

/// One column of the claims table: a sender's name and its finished sweeps.
pub(crate) struct Column<'a> {
    /// "ns-2.35 sender", "RFC 9260 sender", or empty for a study with one sender.
    pub name: String,
    /// Its sweeps, by plan, with their aggregates.
    pub done: &'a [(Plan, Aggregate)],
}

/// The claims table: each claim's measured values under the first column's sender, and
/// its paired difference and verdict under every column's; then, where that sweep was
/// also run over real sockets, the same under the first sender.
pub(crate) fn claims_table(
    claims: &[Claim],
    columns: &[Column<'_>],
    real_done: &[(Plan, Aggregate)],
    label: &str,
) -> Result<String, LabError> {
    let mut md = String::new();
    let _ = writeln!(md, "## Claims\n");
    let at = |c: &Claim, e: String| LabError::at(label, format!("claim `{}`: {e}", c.text));
    let mut head = "| claim | paper | measured | compared with |".to_string();
    let mut rule = "|---|---|---|---|".to_string();
    for col in columns {
        let who = if col.name.is_empty() {
            String::new()
        } else {
            format!("{}: ", col.name)
        };
        head += &format!(" {who}Δ (95 % CI) | {who}verdict |");
        rule += "---|---|";
    }
    if columns.len() > 1 {
        head += " senders agree |";
        rule += "---|";
    }
    let _ = writeln!(md, "{head}\n{rule}");
    let mut disagree = 0;
    for c in claims {
        let mut evals = Vec::new();
        for col in columns {
            let (plan, agg) = col
                .done
                .iter()
                .find(|(p, _)| p.name == c.sweep)
                .ok_or_else(|| at(c, format!("no sweep named `{}`", c.sweep)))?;
            evals.push(evaluate(c, plan, agg).map_err(|e| at(c, e))?);
        }
        md += &claim_row(c, &evals, "");
        disagree += usize::from(columns.len() > 1 && !agree(&evals));
        if let Some((plan, ragg)) = real_done.iter().find(|(p, _)| p.name == c.sweep) {
            let rv = evaluate(c, plan, ragg).map_err(|e| at(c, e))?;
            if rv.left.0.is_some() {
                md += &claim_row(c, &[rv], " — **real sockets**");
            }
        }
    }
    let _ = writeln!(
        md,
        "\n\"Measured\" and \"compared with\" are means ± 95 % CI over the seeds both sides \
         ran (under the first sender). \"Δ\" is the mean of the per-seed differences \
         (measured − compared with; runs at different grid points share seeds) with its 95 % \
         Student-t interval, as a percentage of the compared-with mean, and n the number of \
         seeds. Verdicts: **reproduced** — the \
         claimed direction, with the paper's value inside the interval (or within the \
         tolerance the claims file states, with its reason; an at-least or at-most claim \
         that every seed meets with no difference at all); **same direction, smaller / \
         larger** — the paper's value lies 1.5 half-widths or more outside it; **same \
         direction** — the paper prints no value; **not significant** — the interval holds \
         zero and the paper's value lies 1.5 half-widths or more away; **contradicted** — \
         the opposite direction (for ≈ claims, outside the band); **undecided** — within 1.5 \
         half-widths of a boundary after the most seeds the sweep allows. Seeds are added \
         where a verdict is undecided, up to the sweep's stated maximum."
    );
    if columns.len() > 1 {
        let _ = writeln!(
            md,
            "\n\"Senders agree\" compares the verdicts of the columns; **{disagree}** of {} claims \
             are profile-dependent (their verdict changes with the sender).",
            claims.len()
        );
    }
    md.push('\n');
    Ok(md)
}

/// Whether every column's verdict is the same.
fn agree(evals: &[Evaluation]) -> bool {
    evals.windows(2).all(|w| w[0].verdict == w[1].verdict)
}

/// One row of the claims table: measured values from the first evaluation, then a
/// difference and verdict per evaluation; `suffix` marks rows over real sockets.
fn claim_row(c: &Claim, evals: &[Evaluation], suffix: &str) -> String {
    let show = |(m, ci): (Option<f64>, Option<f64>)| match (m, ci) {
        (Some(m), Some(ci)) => format!("{} ± {}", sig(m), sig(ci)),
        (Some(m), None) => sig(m),
        _ => "–".into(),
    };
    let first = &evals[0];
    let mut row = format!(
        "| {}{suffix} ({} {}) | {} | {} | {} |",
        c.text,
        c.metric,
        c.op,
        c.paper,
        show(first.left),
        show(first.right),
    );
    for e in evals {
        row += &format!(" {} | {} |", delta(e), verdict_cell(e.verdict));
    }
    if evals.len() > 1 {
        row += if agree(evals) {
            " yes |"
        } else {
            " **no: profile-dependent** |"
        };
    }
    row.push('\n');
    row
}

/// The paired difference as a percentage of the compared-with mean (in the metric's
/// unit when that mean is zero), with n.
fn delta(e: &Evaluation) -> String {
    let Some(p) = e.paired else {
        return "–".into();
    };
    let base = e.right.0.filter(|r| *r != 0.0 && !e.changes).map(f64::abs);
    let (m, ci, unit) = match base {
        Some(b) => (100.0 * p.mean / b, p.ci.map(|c| 100.0 * c / b), " %"),
        None => (p.mean, p.ci, ""),
    };
    match ci {
        Some(ci) => format!(
            "{}{}{unit} (± {}), n = {}",
            sign(m),
            sig(m.abs()),
            sig(ci),
            p.n
        ),
        None => format!("{}{}{unit}, n = {}", sign(m), sig(m.abs()), p.n),
    }
}

/// A verdict as the table prints it: the direction found, or its absence, in bold.
fn verdict_cell(v: Option<Verdict>) -> String {
    match v {
        None => "–".into(),
        Some(v) if v.direction_holds() => v.label().into(),
        Some(v) => format!("**{}**", v.label()),
    }
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

    #[test]
    fn pairing_by_seed_sees_a_small_steady_difference_that_unpaired_intervals_hide() {
        // Seeds vary a lot (10, 20, 30), the difference is always +1: unpaired 95 % CIs
        // of both sides overlap almost entirely, the paired differences have no spread.
        let left = [(1, 11.0), (2, 21.0), (3, 31.0)];
        let right = [(3, 30.0), (1, 10.0), (2, 20.0)];
        let d = differences(&left, Side::Samples(&right), 1.0);
        assert_eq!(d, vec![1.0, 1.0, 1.0]);
        let pd = crate::stats::paired(&d, CiMethod::T).unwrap();
        let test = crate::verdict::Test {
            op: Op::Gt,
            paper: None,
            paper_tolerance: 0.0,
            band: 0.0,
        };
        assert_eq!(judge(&test, pd.mean, pd.ci), Verdict::SameDirection);
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

    fn claim(extra: &str) -> Claim {
        toml::from_str(&format!(
            "text = \"t\"\npaper = \"p\"\nsweep = \"s\"\nmetric = \"goodput_mbps\"\n\
             left = {{ a = 1 }}\nop = \">\"\nright_value = 1.0\n{extra}"
        ))
        .unwrap()
    }

    #[test]
    fn a_tolerance_must_say_why_and_a_paper_scale_needs_a_value() {
        assert!(claim("tolerance = 0.05").decision().is_err());
        assert!(claim("tolerance = 0.05\ntolerance_reason = \"x\"")
            .decision()
            .is_ok());
        assert!(claim("paper_scale = \"ratio\"").decision().is_err());
        assert!(claim("paper_value = 2.0\npaper_scale = \"twice\"")
            .decision()
            .is_err());
        let d = claim("paper_value = 59.02").decision().unwrap();
        assert_eq!(d.paper, Some(PaperSize::Percent(59.02)));
    }
}
