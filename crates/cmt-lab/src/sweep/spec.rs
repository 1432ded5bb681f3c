//! Sweep files (TOML): a base scenario, axes over any scenario key, seeds, metrics,
//! comparisons and named reports. Unknown keys are errors; every grid point is
//! validated against the scenario loader before anything runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// A sweep file as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    /// Name (defaults to the file stem).
    #[serde(default)]
    pub name: Option<String>,
    /// Base scenario, relative to the sweep file.
    pub base: String,
    /// Seeds: a count `n` (seeds 1..=n), an explicit list, or a precision target
    /// (`{ min, max, batch, half_width }`: seeds added in batches until it is met).
    pub seeds: Seeds,
    /// Confidence interval: "t" (Student-t, default) or "z" (normal, DB-CMT 2022 eq. 6).
    #[serde(default)]
    pub ci: Option<String>,
    /// Metrics to aggregate (names as in `cmt_sim::METRICS`); default `goodput_mbps`.
    #[serde(default)]
    pub metrics: Vec<String>,
    /// Overrides applied to every run, by dotted key.
    #[serde(default)]
    pub set: toml::Table,
    /// The grid, first axis outermost.
    #[serde(default)]
    pub axes: Vec<AxisSpec>,
    /// Pairwise comparisons against a baseline value of one axis.
    #[serde(default)]
    pub comparisons: Vec<ComparisonSpec>,
    /// Named reports (tables, regression lines, figures).
    #[serde(default)]
    pub reports: Vec<ReportSpec>,
}

/// Seeds as a count, a list or a precision target.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Seeds {
    /// Seeds 1..=n.
    Count(u64),
    /// These seeds.
    List(Vec<u64>),
    /// Seeds 1, 2, … added in batches per grid point until every estimate is precise
    /// enough (see [`crate::sweep::Sequential`]).
    Sequential(SequentialSpec),
}

/// `seeds = { min = 5, max = 20, batch = 5, half_width = "2%" }`: sequential
/// replication to a relative precision (and, in a study, until its claims' verdicts are
/// decided).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SequentialSpec {
    /// Seeds every grid point runs first.
    pub min: u64,
    /// Most seeds any grid point runs.
    pub max: u64,
    /// Seeds added at a time where an estimate is not yet precise enough.
    pub batch: u64,
    /// Target 95 % CI half-width relative to the estimate's scale: `"2%"` or `0.02`.
    /// Without it only a study's claims add seeds, until their verdicts are decided.
    #[serde(default)]
    pub half_width: Option<toml::Value>,
    /// Metrics whose per-point means must reach the target (default: the sweep's
    /// `metrics`; `[]` for none); comparisons and study claims are always included, on
    /// their paired differences.
    #[serde(default)]
    pub metrics: Option<Vec<String>>,
}

impl SequentialSpec {
    /// `half_width` (`"2%"` or `0.02`) as a fraction in (0, 1], if given.
    pub(super) fn half_width_fraction(&self) -> Result<Option<f64>, String> {
        let Some(v) = &self.half_width else {
            return Ok(None);
        };
        crate::aggregate::numeric(&v.to_string())
            .filter(|x| *x > 0.0 && *x <= 1.0)
            .map(Some)
            .ok_or_else(|| format!("half_width = {v}: a relative precision such as \"2%\" or 0.02"))
    }
}

/// One axis of the grid.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AxisSpec {
    /// Dotted scenario key, as for `--set`.
    pub key: String,
    /// Explicit values (TOML values: numbers, strings with units, booleans).
    #[serde(default)]
    pub values: Option<Vec<toml::Value>>,
    /// A numeric range instead of `values`.
    #[serde(default)]
    pub range: Option<RangeSpec>,
    /// Named variants instead of `values`: each sets several scenario keys at once
    /// (e.g. `case1` = loss on two links; `none` = no background traffic). The axis
    /// `key` is then only a label for tables and figures.
    #[serde(default)]
    pub variants: Option<Vec<VariantSpec>>,
}

/// One value of a variant axis.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VariantSpec {
    /// The value's name in results, tables and figures.
    pub name: String,
    /// Overrides by dotted key, as in the sweep's `[set]`.
    #[serde(default)]
    pub set: toml::Table,
}

/// `from..=to` in steps of `step`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeSpec {
    /// First value.
    pub from: f64,
    /// Last value (included when the steps land on it).
    pub to: f64,
    /// Increment (positive).
    pub step: f64,
}

/// What a comparison computes.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ComparisonKind {
    /// Cao et al. 2012, RTX_CSI eq. 2: `(A − B)/B × 100 %`, B = baseline.
    Advantage,
    /// Cao et al. 2012, RTX_CSI eq. 1: `|x − y|/x × 100 %`, x = baseline.
    ImpactDegree,
}

/// Compare every value of `axis` with `baseline` on `metric`, within each combination
/// of the other axes.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComparisonSpec {
    /// Metric name.
    pub metric: String,
    /// Axis key.
    pub axis: String,
    /// The axis value compared against.
    pub baseline: toml::Value,
    /// Advantage or impact degree.
    pub kind: ComparisonKind,
}

/// Plot kinds.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum PlotKind {
    /// x–y lines with CI error bars and least-squares fits.
    Line,
    /// Grouped bars with CI.
    Bar,
}

/// A named report: `y` against axis `x`, one series per value of axis `group`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReportSpec {
    /// File-name-friendly name.
    pub name: String,
    /// Axis on the x axis.
    pub x: String,
    /// Metric on the y axis.
    pub y: String,
    /// Axis whose values make the series (optional).
    #[serde(default)]
    pub group: Option<String>,
    /// Figure kind (default line).
    #[serde(default)]
    pub kind: Option<PlotKind>,
    /// Title (default: derived from the names).
    #[serde(default)]
    pub title: Option<String>,
    /// The x axis's label, in the paper's terms (default: the axis key in words).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x_label: Option<String>,
    /// Only the grid points where these axes have these values (a slice of a larger
    /// grid, e.g. `{ "receiver.rbuf" = "64KB" }`).
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub at: toml::Table,
    /// Legend words for axis values, e.g. `{ "round-robin-strict" = "strict
    /// round-robin (the paper's)" }` (algorithm names get words by default).
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub labels: toml::Table,
    /// Draw each series as its change against this value of the group axis, in percent
    /// of the baseline's mean, with the 95 % CI of the per-seed differences (the
    /// paper's "advantage" (A − B)/B, paired by seed); the baseline itself is not drawn
    /// and paper values are percentages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub relative_to: Option<String>,
    /// Values the paper prints for this figure: one table or a list of them, drawn as
    /// crosses.
    #[serde(default, skip_serializing_if = "PaperSet::is_empty")]
    pub paper: PaperSet,
}

/// `paper = { label = "…", points = [[x, y], …], series = "…" }` of a report: `x` as the
/// axis value is written in the sweep (a number, or the category as written), `y` in the
/// metric's unit. `series` names the group value the values belong to: their crosses take
/// that series' colour (black without it).
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PaperValues {
    /// Legend label, e.g. "paper, Fig. 12 (DB-CMT)".
    pub label: String,
    /// `(x, y)` pairs.
    pub points: Vec<(toml::Value, f64)>,
    /// The series (a value of the report's group axis) these values are the paper's of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
}

/// A report's paper values: none, one table or a list of tables.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(untagged)]
pub enum PaperSet {
    /// No values.
    #[default]
    None,
    /// One table.
    One(PaperValues),
    /// Several tables (one per series, say).
    Many(Vec<PaperValues>),
}

impl PaperSet {
    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        matches!(self, PaperSet::None) || matches!(self, PaperSet::Many(v) if v.is_empty())
    }

    /// The tables, in the order written.
    pub fn tables(&self) -> &[PaperValues] {
        match self {
            PaperSet::None => &[],
            PaperSet::One(p) => std::slice::from_ref(p),
            PaperSet::Many(v) => v,
        }
    }
}

/// `[set]` tables flattened to `dotted.key = value` pairs, in key order.
pub fn flatten(table: &toml::Table) -> BTreeMap<String, toml::Value> {
    fn walk(prefix: &str, t: &toml::Table, out: &mut BTreeMap<String, toml::Value>) {
        for (k, v) in t {
            let key = if prefix.is_empty() {
                k.clone()
            } else {
                format!("{prefix}.{k}")
            };
            match v {
                toml::Value::Table(inner) if !k.contains('.') && !inner.is_empty() => {
                    walk(&key, inner, out)
                }
                _ => {
                    out.insert(key, v.clone());
                }
            }
        }
    }
    let mut out = BTreeMap::new();
    walk("", table, &mut out);
    out
}

/// A TOML value text (`"64KB"`, `0.01`, `true`) as JSON.
pub fn toml_text_to_json(text: &str) -> serde_json::Value {
    toml::from_str::<toml::Table>(&format!("v = {text}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .and_then(|v| serde_json::to_value(v).ok())
        .unwrap_or_else(|| serde_json::Value::String(text.to_string()))
}

/// A TOML value text without string quotes, for tables and labels.
pub fn plain(text: &str) -> String {
    match toml_text_to_json(text) {
        serde_json::Value::String(s) => s,
        v => v.to_string(),
    }
}
