//! Study reproductions: `scenarios/studies/STUDY/study.toml` names a study's sweeps and
//! its headline claims as machine-checkable comparisons; `reproduce` runs the sweeps and
//! writes one report whose first section is the claims table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::aggregate::Aggregate;
use crate::error::LabError;
use crate::report::sig;
use crate::sweep::{run_plan, write_atomic, Plan, RunOptions, Seeds};

/// `study.toml`.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    /// Title of the report.
    pub title: String,
    /// The paper being reproduced (citation line).
    #[serde(default)]
    pub source: Option<String>,
    /// Sweep files, relative to the study folder.
    pub sweeps: Vec<String>,
    /// Settings for `--quick`.
    #[serde(default)]
    pub quick: Option<Quick>,
    /// Headline claims.
    #[serde(default)]
    pub claims: Vec<Claim>,
    /// Single runs whose time series the paper shows (cwnd or TSN over time).
    #[serde(default)]
    pub runs: Vec<StudyRun>,
}

/// One simulation of a study, written with its time-series figures.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyRun {
    /// Folder name under `runs/`.
    pub name: String,
    /// What the paper shows with it.
    pub title: String,
    /// Scenario file, relative to the study folder.
    pub scenario: String,
    /// Overrides by dotted key.
    #[serde(default)]
    pub set: toml::Table,
}

/// `--quick`: fewer seeds, shorter runs.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quick {
    /// Seeds per grid point.
    pub seeds: u64,
    /// Extra overrides for every run (e.g. a shorter `duration`).
    #[serde(default)]
    pub set: toml::Table,
}

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
    /// Grid point: every axis of the sweep → value.
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

/// One evaluated claim.
#[derive(Clone, Debug)]
pub struct Verdict {
    /// Left mean and CI.
    pub left: (Option<f64>, Option<f64>),
    /// Right mean and CI (CI `None` for a constant).
    pub right: (Option<f64>, Option<f64>),
    /// The comparison holds on the means.
    pub holds: Option<bool>,
    /// The 95 % intervals do not overlap (only for two measured sides).
    pub separated: Option<bool>,
}

fn point_of(plan: &Plan, sel: &toml::Table, what: &str) -> Result<Vec<usize>, String> {
    let mut point = Vec::with_capacity(plan.axes.len());
    for a in &plan.axes {
        let v = sel
            .get(&a.key)
            .ok_or_else(|| format!("{what} does not give axis `{}`", a.key))?;
        let i = a
            .values
            .iter()
            .position(|x| *x == v.to_string())
            .ok_or_else(|| format!("{what}: {v} is not a value of `{}`", a.key))?;
        point.push(i);
    }
    if let Some(k) = sel.keys().find(|k| !plan.axes.iter().any(|a| &a.key == *k)) {
        return Err(format!(
            "{what}: `{k}` is not an axis of sweep `{}`",
            plan.name
        ));
    }
    Ok(point)
}

fn stat(agg: &Aggregate, point: &[usize], metric: &str) -> (Option<f64>, Option<f64>) {
    agg.stats
        .iter()
        .find(|s| s.point == point && s.metric == metric)
        .map_or((None, None), |s| (s.mean, s.ci))
}

/// Evaluates a claim against a finished sweep.
pub fn evaluate(c: &Claim, plan: &Plan, agg: &Aggregate) -> Result<Verdict, String> {
    let left = stat(agg, &point_of(plan, &c.left, "left")?, &c.metric);
    let factor = c.factor.unwrap_or(1.0);
    let right = match (&c.right, c.right_value) {
        (Some(sel), None) => {
            let (m, ci) = stat(agg, &point_of(plan, sel, "right")?, &c.metric);
            (m.map(|m| m * factor), ci.map(|c| c * factor))
        }
        (None, Some(v)) => (Some(v * factor), None),
        _ => return Err("give exactly one of `right` and `right_value`".into()),
    };
    let holds = match (left.0, right.0) {
        (Some(l), Some(r)) => Some(match c.op.as_str() {
            ">" => l > r,
            "<" => l < r,
            ">=" => l >= r,
            "<=" => l <= r,
            "~" => (l - r).abs() <= c.tolerance.unwrap_or(0.1) * r.abs(),
            o => return Err(format!("unknown op `{o}` (>, <, >=, <=, ~)")),
        }),
        _ => None,
    };
    let separated = match (left, right) {
        ((Some(l), Some(lc)), (Some(r), Some(rc))) => Some((l - r).abs() > lc + rc),
        _ => None,
    };
    Ok(Verdict {
        left,
        right,
        holds,
        separated,
    })
}

/// Runs a study from its folder into `out`; returns the path of the report.
pub fn reproduce(
    dir: &Path,
    quick: bool,
    jobs: usize,
    out: &Path,
    progress: &(dyn Fn(&str, usize, usize) + Sync),
) -> Result<PathBuf, LabError> {
    let file = dir.join("study.toml");
    let label = file.display().to_string();
    let text = std::fs::read_to_string(&file)
        .map_err(|e| LabError::at(&label, format!("cannot read: {e}")))?;
    let study: StudyFile = toml::from_str(&text).map_err(|e| LabError::at(&label, e.message()))?;
    if quick && study.quick.is_none() {
        return Err(LabError::at(&label, "has no [quick] settings"));
    }
    let mut done: Vec<(Plan, Aggregate)> = Vec::new();
    for s in &study.sweeps {
        let q = study.quick.clone().filter(|_| quick);
        let plan = Plan::load_with(&dir.join(s), |f| {
            if let Some(q) = q {
                f.seeds = Seeds::Count(q.seeds);
                f.set.extend(q.set);
            }
        })?;
        let sweep_out = out.join(&plan.name);
        let opts = RunOptions {
            jobs,
            shard: None,
            out: sweep_out.clone(),
        };
        run_plan(&plan, &opts, &|d, t| progress(&plan.name, d, t))?;
        let agg = crate::finalize(&plan, &sweep_out, &sweep_out)?;
        done.push((plan, agg));
    }
    let mut runs_md = String::new();
    for r in &study.runs {
        runs_md += &single_run(dir, r, &out.join("runs").join(&r.name), &label)?;
    }
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", study.title);
    if let Some(src) = &study.source {
        let _ = writeln!(md, "Reproducing: {src}\n");
    }
    let mode = if quick {
        "quick mode (fewer seeds, shorter runs: indicative only)"
    } else {
        "full mode"
    };
    let _ = writeln!(
        md,
        "Run with `cmtlab reproduce`, {mode}. Means ± 95 % CI over seeds.\n"
    );
    let _ = writeln!(md, "## Claims\n");
    let _ = writeln!(md, "| claim | paper | measured | compared with | difference | holds | CIs separated |\n|---|---|---|---|---|---|---|");
    for c in &study.claims {
        let (plan, agg) = done
            .iter()
            .find(|(p, _)| p.name == c.sweep)
            .ok_or_else(|| {
                LabError::at(
                    &label,
                    format!("claim `{}`: no sweep named `{}`", c.text, c.sweep),
                )
            })?;
        let v = evaluate(c, plan, agg)
            .map_err(|e| LabError::at(&label, format!("claim `{}`: {e}", c.text)))?;
        let show = |(m, ci): (Option<f64>, Option<f64>)| match (m, ci) {
            (Some(m), Some(ci)) => format!("{} ± {}", sig(m), sig(ci)),
            (Some(m), None) => sig(m),
            _ => "–".into(),
        };
        let yn = |b: Option<bool>| b.map_or("–", |b| if b { "yes" } else { "**no**" });
        let diff = match (v.left.0, v.right.0) {
            (Some(l), Some(r)) if r != 0.0 => format!("{:+.1} %", 100.0 * (l - r) / r.abs()),
            _ => "–".into(),
        };
        let _ = writeln!(
            md,
            "| {} ({} {}) | {} | {} | {} | {} | {} | {} |",
            c.text,
            c.metric,
            c.op,
            c.paper,
            show(v.left),
            show(v.right),
            diff,
            yn(v.holds),
            yn(v.separated)
        );
    }
    let _ = writeln!(md, "\n\"Difference\" is (measured − compared with) / compared with. A claim \"holds\" when the comparison is true on the means; \"CIs separated\" says whether the two 95 % intervals are disjoint, i.e. whether the difference is clear at this number of seeds.\n");
    if !runs_md.is_empty() {
        let _ = writeln!(md, "## Single runs\n\n{runs_md}");
    }
    for (plan, _) in &done {
        let sub =
            std::fs::read_to_string(out.join(&plan.name).join("report.md")).unwrap_or_default();
        let sub = sub
            .replace("](", &format!("]({}/", plan.name))
            .replacen("# ", "## ", 1);
        let sub = sub
            .lines()
            .map(|l| {
                if l.starts_with("## ") && !l.starts_with("## Sweep") {
                    format!("#{l}")
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        let _ = writeln!(md, "{sub}\n");
    }
    let report = out.join("report.md");
    write_atomic(&report, md.as_bytes())
        .map_err(|e| LabError::at(&out.display().to_string(), e))?;
    Ok(report)
}

/// Runs one study run into `dir_out`; returns its report section.
fn single_run(dir: &Path, r: &StudyRun, dir_out: &Path, label: &str) -> Result<String, LabError> {
    let here = |m: String| LabError::at(label, format!("run `{}`: {m}", r.name));
    let overrides: Vec<String> = crate::sweep::flatten(&r.set)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let built =
        cmt_sim::load_file(&dir.join(&r.scenario), &overrides).map_err(|e| here(e.to_string()))?;
    let mut sim = cmt_sim::Simulation::new(built).map_err(here)?;
    sim.run(&mut |_| {});
    let summary = cmt_sim::Summary::of(&sim, 0.0);
    cmt_sim::write_outputs(&sim, &summary, dir_out)
        .map_err(|e| here(format!("cannot write {}: {e}", dir_out.display())))?;
    let figures = crate::plot::plot_run(dir_out, &r.title)?;
    let mut md = format!(
        "### {}\n\n`{}` with {}: goodput {} Mbit/s, {} fast retransmits, {} timeouts; \
         scheduler {}, rtx {}, cc {}. Files in `runs/{}/`.\n\n",
        r.title,
        r.scenario,
        if overrides.is_empty() {
            "no overrides".to_string()
        } else {
            format!("`{}`", overrides.join("`, `"))
        },
        sig(summary.goodput_mbps),
        summary.fast_retransmits,
        summary.timeouts,
        summary.scheduler,
        summary.rtx,
        summary.cc,
        r.name
    );
    for f in figures {
        let _ = writeln!(md, "![{f}](runs/{}/{f})\n", r.name);
    }
    Ok(md)
}
