//! Expanding a sweep into runs: the cartesian product of the axes (first axis
//! outermost) times the seeds (innermost), each run with a stable id derived from its
//! full configuration.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::grid::{axes, cartesian, check_grid_size, ci_method, seeds, Axis, CiMethod};
use super::spec::{flatten, ComparisonSpec, ReportSpec, SweepFile};
use crate::error::LabError;
use cmt_sim::input_file::{read_text, MAX_TEXT};

/// One simulation of the sweep.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RunSpec {
    /// Position in the plan (0-based).
    pub index: usize,
    /// Stable id: FNV-1a over base scenario, overrides and seed, hex.
    pub id: String,
    /// Seed.
    pub seed: u64,
    /// Index into each axis's values.
    pub point: Vec<usize>,
    /// Every override, `KEY=VALUE`, including `seed=`.
    pub overrides: Vec<String>,
}

/// A sweep ready to run, with everything needed to re-create its outputs.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    /// Sweep name.
    pub name: String,
    /// Text of the base scenario.
    pub base_text: String,
    /// Base scenario name (for results).
    pub base_name: String,
    /// Directory of the base scenario (relative trace files are resolved from it).
    pub base_dir: String,
    /// Axes.
    pub axes: Vec<Axis>,
    /// Seeds (of a sequential sweep: all it may use, `max` of them).
    pub seeds: Vec<u64>,
    /// The stopping rule of a sequential sweep (`seeds = { min, max, … }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential: Option<super::Sequential>,
    /// Runs in order.
    pub runs: Vec<RunSpec>,
    /// Metrics to aggregate.
    pub metrics: Vec<String>,
    /// Path names of the scenario (for per-path result columns).
    pub path_names: Vec<String>,
    /// The association and the scenario's closed-loop background flows, by name, when
    /// it has such flows (for per-flow result columns: `flows.<name>.<field>`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub flow_names: Vec<String>,
    /// CI method.
    pub ci: CiMethod,
    /// Comparisons.
    pub comparisons: Vec<ComparisonSpec>,
    /// Reports.
    pub reports: Vec<ReportSpec>,
    /// The build that planned (and runs) this sweep; run ids include its source hash.
    #[serde(default)]
    pub build: cmt_sim::Build,
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Plan {
    /// The scenario of run `r`: the base with the run's overrides.
    pub fn scenario(&self, r: &RunSpec) -> Result<cmt_sim::Built, String> {
        cmt_sim::load_str_in(
            &self.base_text,
            &self.base_name,
            Some(&self.base_name),
            &r.overrides,
            Some(std::path::Path::new(&self.base_dir)),
        )
        .map_err(|e| e.to_string())
    }

    /// Reads a sweep file and its base scenario, expands and validates the grid.
    pub fn load(path: &Path) -> Result<Plan, LabError> {
        Plan::load_with(path, |_| {})
    }

    /// As [`load`](Self::load), letting `tweak` adjust the file first (quick modes).
    pub fn load_with(path: &Path, tweak: impl FnOnce(&mut SweepFile)) -> Result<Plan, LabError> {
        let label = path.display().to_string();
        let text = read_text(path, MAX_TEXT)
            .map_err(|e| LabError::at(&label, format!("cannot read file: {e}")))?;
        let stem = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = path.parent().unwrap_or(Path::new("."));
        Plan::from_text(&text, &label, &stem, dir, tweak)
    }

    /// A plan from the text of a sweep file: `label` names it in errors, `stem` is the
    /// sweep's name when it sets none, and its `base` scenario is looked up from `dir`.
    pub fn from_text(
        text: &str,
        label: &str,
        stem: &str,
        dir: &Path,
        tweak: impl FnOnce(&mut SweepFile),
    ) -> Result<Plan, LabError> {
        let mut file: SweepFile = toml::from_str::<toml::Value>(text)
            .map_err(|e| LabError::at(label, toml_error(text, &e)))
            .and_then(|v| {
                serde_path_to_error::deserialize(v).map_err(|e| {
                    let at = e.path().to_string();
                    LabError::at(label, format!("field `{at}`: {}", e.into_inner()))
                })
            })?;
        tweak(&mut file);
        let base_path = dir.join(&file.base);
        let base_text = read_text(&base_path, MAX_TEXT).map_err(|e| {
            LabError::at(
                label,
                format!("field `base`: cannot read {}: {e}", base_path.display()),
            )
        })?;
        Plan::build(file, base_text, label, stem, &base_path)
    }

    fn build(
        f: SweepFile,
        base_text: String,
        label: &str,
        stem: &str,
        base_path: &Path,
    ) -> Result<Plan, LabError> {
        let name = f.name.clone().unwrap_or_else(|| stem.to_string());
        crate::names::check_folder_name("name", &name).map_err(|e| LabError::at(label, e))?;
        let seeds = seeds(f.seeds.clone(), label)?;
        let ci = ci_method(f.ci.as_deref(), label)?;
        let axes = axes(&f.axes, label)?;
        let fixed: Vec<String> = flatten(&f.set)
            .into_iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();

        check_grid_size(&axes, &seeds, label)?;
        let points = cartesian(&axes);
        let (names, traces) = check_points(
            &points,
            &axes,
            &fixed,
            seeds[0],
            (&base_text, base_path),
            label,
        )?;
        let build = cmt_sim::build();
        let metrics = metrics(&f, &names, label)?;
        let sequential = match &f.seeds {
            super::Seeds::Sequential(s) => {
                for m in s.metrics.iter().flatten() {
                    if !is_metric(m, &names) {
                        return Err(LabError::at(
                            label,
                            format!("field `seeds.metrics`: unknown metric `{m}`"),
                        ));
                    }
                }
                Some(super::Sequential::new(s, &metrics))
            }
            _ => None,
        };
        check_comparisons(&f, &axes, label)?;
        check_reports(&f, &axes, label)?;
        let runs = runs(&points, &seeds, &axes, &fixed, &base_text, &build, &traces);
        let base_name = base_path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Plan {
            name,
            base_text,
            base_name,
            base_dir: base_path
                .parent()
                .map(|d| d.display().to_string())
                .unwrap_or_default(),
            axes,
            seeds,
            sequential,
            runs,
            metrics,
            path_names: names.paths,
            flow_names: names.flows,
            ci,
            comparisons: f.comparisons,
            reports: f.reports,
            build,
        })
    }

    /// The plan restricted to the grid points `keep`: their runs only (renumbered), and
    /// no comparisons, reports or precision target — what a study's second sender needs
    /// for its claims.
    pub fn keep_points(mut self, keep: &std::collections::BTreeSet<Vec<usize>>) -> Plan {
        self.runs.retain(|r| keep.contains(&r.point));
        for (i, r) in self.runs.iter_mut().enumerate() {
            r.index = i;
        }
        self.comparisons.clear();
        self.reports.clear();
        if let Some(s) = self.sequential.as_mut() {
            s.half_width = None;
        }
        self
    }

    /// A short fingerprint of the whole plan (merge refuses to mix plans).
    pub fn fingerprint(&self) -> String {
        let ids: String = self.runs.iter().map(|r| r.id.as_str()).collect();
        format!("{:016x}", fnv1a(ids.as_bytes()))
    }

    /// The axes a report fixes with `at`, as (axis, value) indexes.
    pub fn report_at(&self, r: &ReportSpec) -> Vec<(usize, usize)> {
        r.at.iter()
            .filter_map(|(k, v)| {
                let a = self.axes.iter().position(|a| &a.key == k)?;
                let v = self.axes[a]
                    .values
                    .iter()
                    .position(|x| *x == v.to_string())?;
                Some((a, v))
            })
            .collect()
    }

    /// A report's series of `point`: `None` when `at` excludes the point, else the
    /// indexes of the axes other than `x` and the fixed ones.
    pub fn report_series(&self, r: &ReportSpec, xi: usize, point: &[usize]) -> Option<Vec<usize>> {
        let at = self.report_at(r);
        if at.iter().any(|&(a, v)| point[a] != v) {
            return None;
        }
        Some(
            point
                .iter()
                .enumerate()
                .filter(|(a, _)| *a != xi && !at.iter().any(|&(f, _)| f == *a))
                .map(|(_, &v)| v)
                .collect(),
        )
    }

    /// The axes a report's series labels leave out: its x axis and the fixed ones.
    pub fn report_skips(&self, r: &ReportSpec, xi: usize) -> Vec<usize> {
        let mut skip: Vec<usize> = self.report_at(r).into_iter().map(|(a, _)| a).collect();
        skip.push(xi);
        skip
    }

    /// `key=value` labels of a run's grid point.
    pub fn point_label(&self, point: &[usize]) -> String {
        point
            .iter()
            .enumerate()
            .map(|(a, &v)| {
                format!(
                    "{}={}",
                    self.axes[a].key,
                    super::spec::plain(&self.axes[a].values[v])
                )
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A TOML syntax error as one line with its line and column.
pub(crate) fn toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |k| k + 1) + 1;
            format!("line {line}, column {column}: {}", e.message().trim_end())
        }
        None => e.message().trim_end().to_string(),
    }
}

/// The names per-path and per-flow metrics may use.
struct Names {
    paths: Vec<String>,
    flows: Vec<String>,
}

fn is_metric(m: &str, names: &Names) -> bool {
    let named = |rest: &str, known: &[String], fields: &[&str]| {
        rest.rsplit_once('.')
            .is_some_and(|(n, f)| known.iter().any(|k| k == n) && fields.contains(&f))
    };
    if let Some(rest) = m.strip_prefix("paths.") {
        return named(rest, &names.paths, cmt_sim::PATH_METRICS);
    }
    if let Some(rest) = m.strip_prefix("flows.") {
        return named(rest, &names.flows, cmt_sim::FLOW_METRICS);
    }
    cmt_sim::METRICS.contains(&m)
}

/// Trace fingerprints per grid point.
type Traces<'p> = std::collections::BTreeMap<&'p [usize], Vec<u64>>;

/// Every grid point must be a valid scenario (checked with the first seed): the path
/// and flow names (of the first point) and each point's trace fingerprints.
fn check_points<'p>(
    points: &'p [Vec<usize>],
    axes: &[Axis],
    fixed: &[String],
    seed: u64,
    base: (&str, &Path),
    label: &str,
) -> Result<(Names, Traces<'p>), LabError> {
    let (base_text, base_path) = base;
    let mut names: Option<Names> = None;
    let mut traces: Traces<'p> = Default::default();
    for p in points {
        let mut ov = fixed.to_vec();
        ov.extend(
            p.iter()
                .enumerate()
                .flat_map(|(a, &v)| axes[a].overrides(v)),
        );
        ov.push(format!("seed={seed}"));
        let built = cmt_sim::load_str_in(
            base_text,
            &base_path.display().to_string(),
            None,
            &ov,
            base_path.parent(),
        )
        .map_err(|e| {
            let at: Vec<String> = p
                .iter()
                .enumerate()
                .map(|(a, &v)| format!("{}={}", axes[a].key, axes[a].values[v]))
                .collect();
            LabError::at(label, format!("grid point [{}]: {e}", at.join(", ")))
        })?;
        names.get_or_insert_with(|| Names {
            paths: built.paths.iter().map(|p| p.name.clone()).collect(),
            flows: cmt_sim::fairness_names(&built),
        });
        let t = built.links.iter().filter_map(|l| l.trace.as_ref());
        traces.insert(&p[..], t.map(|t| t.fingerprint()).collect());
    }
    let names = names.unwrap_or(Names {
        paths: Vec::new(),
        flows: Vec::new(),
    });
    Ok((names, traces))
}

/// `metrics` (default goodput) and every metric comparisons and reports name must exist.
fn metrics(f: &SweepFile, names: &Names, label: &str) -> Result<Vec<String>, LabError> {
    let metrics = if f.metrics.is_empty() {
        vec!["goodput_mbps".to_string()]
    } else {
        f.metrics.clone()
    };
    for m in metrics
        .iter()
        .chain(f.comparisons.iter().map(|c| &c.metric))
        .chain(f.reports.iter().map(|r| &r.y))
    {
        if !is_metric(m, names) {
            return Err(LabError::at(
                label,
                format!(
                    "unknown metric `{m}` (known: {}, paths.<name>.<{}>, flows.<name>.<{}>)",
                    cmt_sim::METRICS.join(", "),
                    cmt_sim::PATH_METRICS.join("|"),
                    cmt_sim::FLOW_METRICS.join("|")
                ),
            ));
        }
    }
    Ok(metrics)
}

/// Comparisons name an axis and one of its values as baseline.
fn check_comparisons(f: &SweepFile, axes: &[Axis], label: &str) -> Result<(), LabError> {
    let axis_known = |k: &str| axes.iter().any(|a| a.key == k);
    for c in &f.comparisons {
        if !axis_known(&c.axis) {
            return Err(LabError::at(
                label,
                format!("comparison on `{}`: not an axis", c.axis),
            ));
        }
        let b = c.baseline.to_string();
        if !axes
            .iter()
            .any(|a| a.key == c.axis && a.values.contains(&b))
        {
            return Err(LabError::at(
                label,
                format!(
                    "comparison on `{}`: baseline {b} is not one of its values",
                    c.axis
                ),
            ));
        }
    }
    Ok(())
}

/// Reports name axes, and fix other axes at values they have.
fn check_reports(f: &SweepFile, axes: &[Axis], label: &str) -> Result<(), LabError> {
    let axis_known = |k: &str| axes.iter().any(|a| a.key == k);
    for r in &f.reports {
        for k in std::iter::once(&r.x)
            .chain(r.group.iter())
            .chain(r.at.keys())
        {
            if !axis_known(k) {
                return Err(LabError::at(
                    label,
                    format!("report `{}`: `{k}` is not an axis", r.name),
                ));
            }
        }
        if r.at.contains_key(&r.x) {
            return Err(LabError::at(
                label,
                format!("report `{}`: `at` fixes its own x axis `{}`", r.name, r.x),
            ));
        }
        for (k, v) in &r.at {
            let v = v.to_string();
            if !axes.iter().any(|a| &a.key == k && a.values.contains(&v)) {
                return Err(LabError::at(
                    label,
                    format!("report `{}`: at {k} = {v} is not one of its values", r.name),
                ));
            }
        }
        check_paper(r, axes)
            .and_then(|()| check_labels(r, axes))
            .map_err(|e| LabError::at(label, format!("report `{}`: {e}", r.name)))?;
    }
    Ok(())
}

/// A report's paper values sit at x values its x axis has and name series its group
/// axis has.
fn check_paper(r: &super::spec::ReportSpec, axes: &[Axis]) -> Result<(), String> {
    let x_axis = axes.iter().find(|a| a.key == r.x).expect("checked above");
    for p in r.paper.tables() {
        for (x, _) in &p.points {
            let text = x.to_string();
            let numeric_match = || {
                let want = crate::aggregate::numeric(&text);
                want.is_some()
                    && x_axis
                        .values
                        .iter()
                        .any(|v| crate::aggregate::numeric(v) == want)
            };
            if !x_axis.values.contains(&text) && !numeric_match() {
                return Err(format!(
                    "paper value at {} = {text}, which is not one of its values",
                    r.x
                ));
            }
        }
        if let Some(name) = &p.series {
            if !group_has(r, axes, name) {
                return Err(format!(
                    "paper series `{name}` is not a value of its group axis"
                ));
            }
        }
    }
    Ok(())
}

/// Whether `name` is a value (as written, unquoted) of report `r`'s group axis.
fn group_has(r: &super::spec::ReportSpec, axes: &[Axis], name: &str) -> bool {
    axes.iter()
        .find(|a| Some(&a.key) == r.group.as_ref())
        .is_some_and(|g| g.values.iter().any(|v| super::plain(v) == name))
}

/// A report's legend words are text and name values of its group axis, as does its
/// `relative_to` baseline.
fn check_labels(r: &super::spec::ReportSpec, axes: &[Axis]) -> Result<(), String> {
    if let Some(base) = &r.relative_to {
        if !group_has(r, axes, base) {
            return Err(format!(
                "relative_to `{base}` is not a value of its group axis"
            ));
        }
    }
    for (value, words) in &r.labels {
        if !words.is_str() {
            return Err(format!("label for `{value}` must be text, not {words}"));
        }
        if !group_has(r, axes, value) {
            return Err(format!(
                "labels name `{value}`, which is not a value of its group axis"
            ));
        }
    }
    Ok(())
}

/// Every run: grid point × seed, its overrides and its id (a hash of the base
/// scenario, the overrides, the build and the point's traces).
fn runs(
    points: &[Vec<usize>],
    seeds: &[u64],
    axes: &[Axis],
    fixed: &[String],
    base_text: &str,
    build: &cmt_sim::Build,
    traces: &Traces<'_>,
) -> Vec<RunSpec> {
    let mut runs = Vec::with_capacity(points.len() * seeds.len());
    for p in points {
        for &seed in seeds {
            let mut overrides = fixed.to_vec();
            overrides.extend(
                p.iter()
                    .enumerate()
                    .flat_map(|(a, &v)| axes[a].overrides(v)),
            );
            overrides.push(format!("seed={seed}"));
            let mut h = base_text.as_bytes().to_vec();
            for o in &overrides {
                h.push(0);
                h.extend_from_slice(o.as_bytes());
            }
            // The code and the traces too: a rebuilt binary or an edited trace
            // never reuses a result of another.
            h.push(0);
            h.extend_from_slice(build.source.as_bytes());
            for t in &traces[&p[..]] {
                h.extend_from_slice(&t.to_le_bytes());
            }
            runs.push(RunSpec {
                index: runs.len(),
                id: format!("{:016x}", fnv1a(&h)),
                seed,
                point: p.clone(),
                overrides,
            });
        }
    }
    runs
}
