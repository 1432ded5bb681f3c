//! Study reproductions: `scenarios/studies/STUDY/study.toml` names a study's sweeps and
//! its headline claims as machine-checkable comparisons; `reproduce` runs the sweeps and
//! writes one report whose first section is the claims table.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::aggregate::Aggregate;
use crate::claims::{claims_table, Column};
pub use crate::claims::{evaluate, Claim, Evaluation};
use crate::error::LabError;
use crate::real::RealRunner;
use crate::report::sig;
pub use crate::verdict::Verdict;

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
    /// The SCTP senders the sweeps run with (none: the scenarios' own). The first is
    /// the primary column — every sweep, its figures and tables; each other runs only
    /// the grid points the claims use, into `<out>/<key>/<sweep>`, for the second
    /// column of the claims table.
    #[serde(default)]
    pub senders: Vec<Sender>,
    /// Headline claims.
    #[serde(default)]
    pub claims: Vec<Claim>,
    /// Single runs whose time series the paper shows (cwnd or TSN over time).
    #[serde(default)]
    pub runs: Vec<StudyRun>,
    /// In-order goodput over time of runs that differ along one axis of a sweep.
    #[serde(default)]
    pub timelines: Vec<crate::timeline::Timeline>,
    /// Sweeps also measured over real sockets with `--real`.
    #[serde(default)]
    pub real: Option<crate::real::RealSpec>,
}

/// A sender profile a study's sweeps run with (`[[senders]]`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sender {
    /// The column's name in the claims table ("ns-2.35 sender").
    pub name: String,
    /// Folder name of its sweeps when it is not the primary one.
    pub key: String,
    /// Overrides of every run (e.g. `"association.compat" = "ns2"`).
    #[serde(default)]
    pub set: toml::Table,
    /// What it is, for the report.
    #[serde(default)]
    pub about: Option<String>,
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

/// Runs a study from its folder into `out`; returns the path of the report.
pub fn reproduce(
    dir: &Path,
    quick: bool,
    jobs: usize,
    out: &Path,
    progress: &(dyn Fn(&str, usize, usize) + Sync),
) -> Result<PathBuf, LabError> {
    reproduce_with(dir, quick, jobs, out, progress, None)
}

/// [`reproduce`], and with `real` also the study's `[real]` grid points over real
/// sockets, whose claims rows then follow the simulated ones.
pub fn reproduce_with(
    dir: &Path,
    quick: bool,
    jobs: usize,
    out: &Path,
    progress: &(dyn Fn(&str, usize, usize) + Sync),
    real: Option<RealRunner<'_>>,
) -> Result<PathBuf, LabError> {
    let file = dir.join("study.toml");
    let label = file.display().to_string();
    let text = cmt_sim::input_file::read_text(&file, cmt_sim::input_file::MAX_TEXT)
        .map_err(|e| LabError::at(&label, format!("cannot read: {e}")))?;
    let study: StudyFile = toml::from_str(&text)
        .map_err(|e| LabError::at(&label, crate::sweep::toml_error(&text, &e)))?;
    if quick && study.quick.is_none() {
        return Err(LabError::at(&label, "has no [quick] settings"));
    }
    for r in &study.runs {
        crate::names::check_folder_name("runs.name", &r.name)
            .map_err(|e| LabError::at(&label, e))?;
    }
    for s in &study.senders {
        crate::names::check_folder_name("senders.key", &s.key)
            .map_err(|e| LabError::at(&label, e))?;
    }
    if let (Some(_), Some(spec)) = (real, &study.real) {
        spec.check().map_err(|e| LabError::at(&label, e))?;
    }
    let primary = study.senders.first();
    let done = run_sweeps(&study, dir, quick, jobs, (out, primary, false), progress)?;
    let mut second = Vec::new();
    for s in study.senders.iter().skip(1) {
        let into = out.join(&s.key);
        second.push((
            s,
            run_sweeps(&study, dir, quick, jobs, (&into, Some(s), true), progress)?,
        ));
    }
    let real_done = match (real, &study.real) {
        (Some(runner), Some(spec)) => {
            crate::real::run_all(spec, &done, runner, &out.join("real"), progress)
                .map_err(|e| LabError::at(&label, e))?
        }
        (Some(_), None) => {
            return Err(LabError::at(
                &label,
                "has no [real] section: nothing to run over real sockets",
            ))
        }
        (None, _) => Vec::new(),
    };
    let mut runs_md = String::new();
    for r in &study.runs {
        let into = out.join("runs").join(&r.name);
        runs_md += &single_run(dir, r, primary, &into, &label)?;
    }
    for t in &study.timelines {
        crate::names::check_folder_name("timelines.name", &t.name)
            .map_err(|e| LabError::at(&label, e))?;
    }
    let timelines_md = crate::timeline::section(&study.timelines, &done, out, &label)?;
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
    md += &senders_section(&study.senders);
    let mut columns = vec![Column {
        name: primary.map(|s| s.name.clone()).unwrap_or_default(),
        done: &done,
    }];
    for (s, d) in &second {
        columns.push(Column {
            name: s.name.clone(),
            done: d,
        });
    }
    md += &claims_table(&study.claims, &columns, &real_done, &label)?;
    let mut headroom = Vec::new();
    for (plan, _) in &done {
        headroom.push((
            plan.name.clone(),
            crate::headroom::headroom(plan, &out.join(&plan.name))?,
        ));
    }
    md += &crate::headroom::section(&headroom);
    if let Some(spec) = &study.real {
        md += &crate::real::section(&real_done, &done, &spec.metrics);
    }
    md += &timelines_md;
    if !runs_md.is_empty() {
        let _ = writeln!(md, "## Single runs\n\n{runs_md}");
    }
    md += &sweep_reports(&done, out);
    md += &second_sweeps_note(&second);
    let report = out.join("report.md");
    write_atomic(&report, md.as_bytes())
        .map_err(|e| LabError::at(&out.display().to_string(), e))?;
    Ok(report)
}

/// Which senders ran what, for the report's reader.
fn senders_section(senders: &[Sender]) -> String {
    let Some((first, rest)) = senders.split_first() else {
        return String::new();
    };
    let about = |s: &Sender| {
        s.about
            .as_deref()
            .map_or(String::new(), |a| format!(": {a}"))
    };
    let mut md = format!(
        "Sender: every number below comes from the **{}**{} (the primary column, with \
         every figure and table)",
        first.name,
        about(first)
    );
    for s in rest {
        md += &format!(
            "; the claims table also gives the **{}**{} (the grid points of the claims only, \
             in `{}/`)",
            s.name,
            about(s),
            s.key
        );
    }
    md += ".\n\n";
    md
}

/// Runs every sweep of the study (its quick settings in quick mode) with a sender's
/// overrides and aggregates it; `claims_only` keeps the grid points the claims use.
fn run_sweeps(
    study: &StudyFile,
    dir: &Path,
    quick: bool,
    jobs: usize,
    (out, sender, claims_only): (&Path, Option<&Sender>, bool),
    progress: &(dyn Fn(&str, usize, usize) + Sync),
) -> Result<Vec<(Plan, Aggregate)>, LabError> {
    let mut done: Vec<(Plan, Aggregate)> = Vec::new();
    for s in &study.sweeps {
        let q = study.quick.clone().filter(|_| quick);
        let mut plan = Plan::load_with(&dir.join(s), |f| {
            if let Some(q) = q {
                f.seeds = Seeds::Count(q.seeds);
                f.set.extend(q.set);
            }
            if let Some(sender) = sender {
                f.set.extend(sender.set.clone());
            }
        })?;
        if claims_only {
            let mut keep = std::collections::BTreeSet::new();
            for c in study.claims.iter().filter(|c| c.sweep == plan.name) {
                keep.extend(
                    crate::claims::claim_points(c, &plan)
                        .map_err(|e| LabError::at(s, format!("claim `{}`: {e}", c.text)))?,
                );
            }
            if keep.is_empty() {
                continue;
            }
            plan = plan.keep_points(&keep);
        }
        // A sequential sweep also runs until each claim on it is precise enough.
        if plan.sequential.is_some() {
            let mut claims = Vec::new();
            for c in study.claims.iter().filter(|c| c.sweep == plan.name) {
                claims.push(
                    crate::claims::estimate(c, &plan)
                        .map_err(|e| LabError::at(s, format!("claim `{}`: {e}", c.text)))?,
                );
            }
            if let Some(rule) = plan.sequential.as_mut() {
                rule.claims = claims;
            }
        }
        let sweep_out = out.join(&plan.name);
        let opts = RunOptions {
            jobs,
            shard: None,
            out: sweep_out.clone(),
        };
        let name = match sender.filter(|_| claims_only) {
            Some(s) => format!("{} ({})", plan.name, s.key),
            None => plan.name.clone(),
        };
        run_plan(&plan, &opts, &|d, t| progress(&name, d, t))?;
        let agg = crate::finalize(&plan, &sweep_out, &sweep_out)?;
        done.push((plan, agg));
    }
    Ok(done)
}

/// Where the other senders' sweeps are.
fn second_sweeps_note(second: &[(&Sender, Vec<(Plan, Aggregate)>)]) -> String {
    let mut md = String::new();
    for (s, done) in second {
        let names: Vec<String> = done
            .iter()
            .map(|(p, _)| format!("`{}/{}/`", s.key, p.name))
            .collect();
        let _ = writeln!(
            md,
            "The {}'s runs (the claims' grid points): {}.\n",
            s.name,
            names.join(", ")
        );
    }
    md
}

/// Each sweep's own report, its headings one level down and its links into its folder.
fn sweep_reports(done: &[(Plan, Aggregate)], out: &Path) -> String {
    let mut md = String::new();
    for (plan, _) in done {
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
    md
}

/// Runs one study run into `dir_out`, with the primary sender's overrides under the
/// run's own; returns its report section.
fn single_run(
    dir: &Path,
    r: &StudyRun,
    sender: Option<&Sender>,
    dir_out: &Path,
    label: &str,
) -> Result<String, LabError> {
    let here = |m: String| LabError::at(label, format!("run `{}`: {m}", r.name));
    let mut set = sender.map(|s| s.set.clone()).unwrap_or_default();
    set.extend(r.set.clone());
    let overrides: Vec<String> = crate::sweep::flatten(&set)
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let built =
        cmt_sim::load_file(&dir.join(&r.scenario), &overrides).map_err(|e| here(e.to_string()))?;
    let mut sim = cmt_sim::Simulation::new(built).map_err(here)?;
    sim.try_run(&mut |_| {}).map_err(here)?;
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
