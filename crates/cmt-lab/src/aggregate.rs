//! Per-group statistics of a sweep: every grid point (all axes, over the seeds) gets
//! n, mean, SD and a 95 % CI per metric; comparisons and least-squares lines are
//! computed from the group means.

use std::collections::BTreeMap;

use crate::stats::{
    advantage_pct, ci95_half_width, impact_degree_pct, linear_fit, mean, sample_sd, Fit,
};
use crate::sweep::plain;
use crate::sweep::{ComparisonKind, Plan, PlotKind, RunRecord};

/// Statistics of one metric at one grid point.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupStat {
    /// Grid point (value index per axis).
    pub point: Vec<usize>,
    /// Metric name.
    pub metric: String,
    /// Runs with a value.
    pub n: usize,
    /// Mean (`None` when no run had a value, e.g. `ftt_s` of timed runs).
    pub mean: Option<f64>,
    /// Sample SD.
    pub sd: Option<f64>,
    /// CI half-width.
    pub ci: Option<f64>,
}

/// One comparison result.
#[derive(Clone, Debug, PartialEq)]
pub struct CompRow {
    /// Grid point of the compared value.
    pub point: Vec<usize>,
    /// Index of the comparison in the plan.
    pub spec: usize,
    /// Percent.
    pub pct: Option<f64>,
}

/// A least-squares line through one series of a report.
#[derive(Clone, Debug, PartialEq)]
pub struct FitRow {
    /// Report name.
    pub report: String,
    /// Series label (values of the other axes).
    pub series: String,
    /// The fit.
    pub fit: Fit,
}

/// Everything the report and the figures need.
#[derive(Clone, Debug, Default)]
pub struct Aggregate {
    /// Metrics aggregated, in order.
    pub metrics: Vec<String>,
    /// Per grid point and metric.
    pub stats: Vec<GroupStat>,
    /// Comparisons.
    pub comparisons: Vec<CompRow>,
    /// Regression lines of line reports with numeric x.
    pub fits: Vec<FitRow>,
    /// Every run's value, `(seed, value)`, per grid point and metric (in the order of
    /// `metrics`): what paired comparisons need.
    pub samples: BTreeMap<Vec<usize>, Vec<Vec<(u64, f64)>>>,
}

impl Aggregate {
    /// The `(seed, value)` samples of `metric` at `point`.
    pub fn samples(&self, point: &[usize], metric: &str) -> Option<&[(u64, f64)]> {
        let i = self.metrics.iter().position(|m| m == metric)?;
        Some(&self.samples.get(point)?[i])
    }
}

/// Collects run values; feed it every run, then [`finish`](Self::finish).
pub struct Aggregator<'a> {
    plan: &'a Plan,
    metrics: Vec<String>,
    values: BTreeMap<Vec<usize>, Vec<Vec<(u64, f64)>>>,
}

impl<'a> Aggregator<'a> {
    /// Aggregates the plan's metrics plus those its comparisons and reports use.
    pub fn new(plan: &'a Plan) -> Self {
        let mut metrics: Vec<String> = Vec::new();
        let wanted = plan
            .metrics
            .iter()
            .chain(plan.comparisons.iter().map(|c| &c.metric))
            .chain(plan.reports.iter().map(|r| &r.y));
        for m in wanted {
            if !metrics.contains(m) {
                metrics.push(m.clone());
            }
        }
        Aggregator {
            plan,
            metrics,
            values: BTreeMap::new(),
        }
    }

    /// Adds one run.
    pub fn add(&mut self, rec: &RunRecord) {
        self.add_values(&rec.point, rec.seed, &|m| rec.summary.metric(m));
    }

    /// Adds one run given as a metric → value lookup (e.g. a run over real sockets,
    /// which has only some of the simulator's metrics).
    pub fn add_values(&mut self, point: &[usize], seed: u64, value: &dyn Fn(&str) -> Option<f64>) {
        let n = self.metrics.len();
        let slot = self
            .values
            .entry(point.to_vec())
            .or_insert_with(|| vec![Vec::new(); n]);
        for (i, m) in self.metrics.iter().enumerate() {
            if let Some(v) = value(m).filter(|v| v.is_finite()) {
                slot[i].push((seed, v));
            }
        }
    }

    /// Computes statistics, comparisons and fits.
    pub fn finish(self) -> Aggregate {
        let plan = self.plan;
        let mut stats = Vec::new();
        for (point, per_metric) in &self.values {
            for (i, m) in self.metrics.iter().enumerate() {
                let xs: Vec<f64> = per_metric[i].iter().map(|s| s.1).collect();
                let xs = &xs;
                stats.push(GroupStat {
                    point: point.clone(),
                    metric: m.clone(),
                    n: xs.len(),
                    mean: mean(xs),
                    sd: sample_sd(xs),
                    ci: ci95_half_width(xs, plan.ci),
                });
            }
        }
        let mean_of = |point: &[usize], metric: &str| {
            stats
                .iter()
                .find(|s| s.point == point && s.metric == metric)
                .and_then(|s| s.mean)
        };
        let mut comparisons = Vec::new();
        for (ci, c) in plan.comparisons.iter().enumerate() {
            let ai = plan
                .axes
                .iter()
                .position(|a| a.key == c.axis)
                .expect("validated axis");
            let bi = plan.axes[ai]
                .values
                .iter()
                .position(|v| *v == c.baseline.to_string())
                .expect("validated baseline");
            for point in self.values.keys().filter(|p| p[ai] != bi) {
                let mut base = point.clone();
                base[ai] = bi;
                let pct = match (mean_of(point, &c.metric), mean_of(&base, &c.metric)) {
                    (Some(a), Some(b)) => match c.kind {
                        ComparisonKind::Advantage => advantage_pct(a, b),
                        ComparisonKind::ImpactDegree => impact_degree_pct(b, a),
                    },
                    _ => None,
                };
                comparisons.push(CompRow {
                    point: point.clone(),
                    spec: ci,
                    pct,
                });
            }
        }
        let mut fits = Vec::new();
        for r in plan
            .reports
            .iter()
            .filter(|r| r.kind.unwrap_or(PlotKind::Line) == PlotKind::Line)
            .filter(|r| r.relative_to.is_none())
        {
            let xi = plan
                .axes
                .iter()
                .position(|a| a.key == r.x)
                .expect("validated axis");
            let xs: Option<Vec<f64>> = plan.axes[xi].values.iter().map(|v| numeric(v)).collect();
            let Some(xs) = xs else { continue };
            let mut series: BTreeMap<Vec<usize>, Vec<(f64, f64)>> = BTreeMap::new();
            for point in self.values.keys() {
                let Some(key) = plan.report_series(r, xi, point) else {
                    continue;
                };
                if let Some(y) = mean_of(point, &r.y) {
                    series.entry(key).or_default().push((xs[point[xi]], y));
                }
            }
            for (key, pts) in series {
                if let Some(fit) = linear_fit(&pts) {
                    fits.push(FitRow {
                        report: r.name.clone(),
                        series: series_label(plan, &plan.report_skips(r, xi), &key),
                        fit,
                    });
                }
            }
        }
        Aggregate {
            metrics: self.metrics,
            stats,
            comparisons,
            fits,
            samples: self.values,
        }
    }
}

/// Numeric value of an axis value text (sizes, rates, durations, percentages, numbers).
pub fn numeric(text: &str) -> Option<f64> {
    let raw = match crate::sweep::toml_text_to_json(text) {
        serde_json::Value::Number(n) => cmt_sim::units::Raw::Num(n.as_f64()?),
        serde_json::Value::String(s) => cmt_sim::units::Raw::Text(s),
        _ => return None,
    };
    cmt_sim::units::numeric(&raw)
}

/// The axes whose values are all quantities and not all bare numbers (`"32KB"`,
/// `"10Mbps"`, `"1%"`): the tables give each a second, numeric column `<key>_value`
/// (bytes, bit/s, seconds or a fraction) so that they sort and plot as numbers.
pub fn labelled_numeric_axes(plan: &Plan) -> Vec<usize> {
    (0..plan.axes.len())
        .filter(|&a| {
            let values = &plan.axes[a].values;
            plan.axes[a].variants.is_empty()
                && values.iter().all(|v| numeric(v).is_some())
                && values.iter().any(|v| v.parse::<f64>().is_err())
        })
        .collect()
}

/// The header and cells of the numeric axis columns of a grid point (see
/// [`labelled_numeric_axes`]).
pub fn numeric_axis_cells(plan: &Plan, axes: &[usize], point: &[usize]) -> Vec<String> {
    axes.iter()
        .map(|&a| numeric(&plan.axes[a].values[point[a]]).map_or(String::new(), |x| format!("{x}")))
        .collect()
}

/// "key=value, …" for the axes not in `skip`, given their indexes in order.
pub fn series_label(plan: &Plan, skip: &[usize], key: &[usize]) -> String {
    let others: Vec<String> = plan
        .axes
        .iter()
        .enumerate()
        .filter(|(a, _)| !skip.contains(a))
        .zip(key)
        .map(|((_, axis), &v)| format!("{}={}", axis.key, plain(&axis.values[v])))
        .collect();
    if others.is_empty() {
        "all".to_string()
    } else {
        others.join(", ")
    }
}
