//! `cmtlab sweep` and `cmtlab merge`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use cmt_lab::sweep::{run_plan, Plan, RunOptions};
use indicatif::{ProgressBar, ProgressStyle};

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {s}: expected I/N with 0 ≤ I < N");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

pub fn sweep(
    file: &Path,
    jobs: Option<usize>,
    out: Option<PathBuf>,
    shard: Option<&str>,
) -> Result<(), String> {
    let jobs = parallel_runs(jobs)?;
    let shard = shard.map(parse_shard).transpose()?;
    let plan = Plan::load(file).map_err(|e| e.to_string())?;
    let out = out.unwrap_or_else(|| PathBuf::from("out").join(&plan.name));
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::new(0);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} runs {pos}/{len} [{bar:40}] elapsed {elapsed} ETA {eta}",
            )
            .expect("static template")
            .progress_chars("=> "),
        );
        b
    });
    let progress = |done: usize, total: usize| {
        if let Some(b) = &bar {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    };
    let opts = RunOptions {
        jobs,
        shard,
        out: out.clone(),
    };
    let outcome = run_plan(&plan, &opts, &progress).map_err(|e| e.to_string())?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let planned = match &plan.sequential {
        None => format!("{} runs planned", plan.runs.len()),
        Some(rule) => {
            let used = outcome.selection.seeds.values();
            format!(
                "{} runs needed by precision ({}–{} seeds per grid point, at most {}; {} \
                 point(s) stopped at the maximum)",
                outcome.selection.runs.len(),
                used.clone().min().copied().unwrap_or(0),
                used.max().copied().unwrap_or(0),
                rule.max,
                outcome.selection.at_max.len()
            )
        }
    };
    sayln!(
        "sweep {}: {planned}, {} run now, {} already done (jobs {jobs}{})",
        plan.name,
        outcome.ran,
        outcome.skipped,
        shard.map_or(String::new(), |(i, n)| format!(", shard {i}/{n}"))
    );
    if outcome.complete {
        cmt_lab::finalize(&plan, &out, &out).map_err(|e| e.to_string())?;
        sayln!(
            "results in {}: results.csv, runs.jsonl, aggregate.csv, comparisons.csv, report.md",
            out.display()
        );
    } else {
        sayln!(
            "not all runs are done yet; finish the other shards, then `cmtlab merge DIR...`{}",
            if plan.sequential.is_some() {
                " (a sequential sweep decides its next seeds from every shard's results: \
                 after merging, run it into the merged directory to go on)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<(), String> {
    let refs: Vec<&Path> = dirs.iter().map(PathBuf::as_path).collect();
    let plan = cmt_lab::merge::merge(&refs, out).map_err(|e| e.to_string())?;
    sayln!(
        "merged {} runs of sweep {} into {}",
        plan.runs.len(),
        plan.name,
        out.display()
    );
    Ok(())
}

pub fn plot(dir: &Path) -> Result<(), String> {
    if dir.join("plan.json").exists() {
        let plan = cmt_lab::merge::read_plan(dir).map_err(|e| e.to_string())?;
        cmt_lab::finalize(&plan, dir, dir).map_err(|e| e.to_string())?;
        sayln!(
            "re-drew the figures and report.md of sweep {} in {}",
            plan.name,
            dir.display()
        );
    } else if dir.join("timeseries.csv").exists() {
        let name = std::fs::read_to_string(dir.join("summary.json"))
            .ok()
            .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
            .and_then(|v| v["scenario"].as_str().map(String::from))
            .unwrap_or_else(|| "run".into());
        let files = cmt_lab::plot::plot_run(dir, &name).map_err(|e| e.to_string())?;
        sayln!("drew {} in {}", files.join(", "), dir.display());
    } else {
        return Err(format!(
            "{}: neither a sweep output (plan.json) nor a run output (timeseries.csv)",
            dir.display()
        ));
    }
    Ok(())
}

/// How `reproduce` runs a study: `--quick`, `--real`, `--jobs`.
#[derive(Clone, Copy)]
pub struct StudyMode {
    /// Fewer seeds and shorter runs.
    pub quick: bool,
    /// Also the `[real]` grid points over real sockets.
    pub real: bool,
    /// Parallel runs (default: the number of CPUs).
    pub jobs: Option<usize>,
}

impl StudyMode {
    /// The output folder name of study `name`: `name`, or `name-quick` in quick mode.
    fn folder(&self, name: &str) -> String {
        format!("{name}{}", if self.quick { "-quick" } else { "" })
    }
}

pub fn reproduce(
    study: &str,
    studies: Option<&Path>,
    mode: StudyMode,
    out: Option<PathBuf>,
) -> Result<(), String> {
    let StudyMode { quick, real, jobs } = mode;
    let jobs = parallel_runs(jobs)?;
    let dir = find_study(study, studies)?;
    let name = dir
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| study.into());
    let out = out.unwrap_or_else(|| PathBuf::from("out").join(mode.folder(&name)));
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::new(0);
        b.set_style(
            ProgressStyle::with_template("{spinner} {msg} runs {pos}/{len} [{bar:40}] ETA {eta}")
                .expect("static template")
                .progress_chars("=> "),
        );
        b
    });
    let progress = |sweep: &str, done: usize, total: usize| {
        if let Some(b) = &bar {
            b.set_message(sweep.to_string());
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
    };
    let runner = crate::real::run_scenario;
    let report = cmt_lab::study::reproduce_with(
        &dir,
        quick,
        jobs,
        &out,
        &progress,
        real.then_some(&runner as cmt_lab::real::RealRunner<'_>),
    )
    .map_err(|e| e.to_string())?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    sayln!("study {name}: report in {}", report.display());
    Ok(())
}

/// `reproduce --all`: every study of `--studies DIR`, or else of the first studies
/// folder that exists, in name order, each into `<out>/<name>` (`-quick` appended in
/// quick mode).
pub fn reproduce_all(
    studies: Option<&Path>,
    mode: StudyMode,
    out: Option<PathBuf>,
) -> Result<(), String> {
    // A folder given is the one meant; otherwise the first of the usual places.
    let places = match studies {
        Some(d) => vec![d.to_path_buf()],
        None => study_places(None),
    };
    let root = places.iter().find(|p| p.is_dir()).ok_or_else(|| {
        let looked: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
        format!("no studies folder (looked in {})", looked.join(", "))
    })?;
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map_err(|e| format!("{}: cannot list: {e}", root.display()))?
        .filter_map(Result::ok)
        .filter(|e| e.path().join("study.toml").is_file())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(format!(
            "{}: holds no study (no */study.toml)",
            root.display()
        ));
    }
    let base = out.unwrap_or_else(|| PathBuf::from("out"));
    let start = std::time::Instant::now();
    for name in &names {
        let t = std::time::Instant::now();
        let dir = root.join(name).display().to_string();
        reproduce(&dir, None, mode, Some(base.join(mode.folder(name))))?;
        sayln!("  ({name}: {:.1} s)", t.elapsed().as_secs_f64());
    }
    sayln!(
        "{} studies of {} in {:.1} s",
        names.len(),
        root.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Most parallel runs `--jobs` accepts.
const MAX_JOBS: usize = 256;

/// `--jobs`, checked: 1 to [`MAX_JOBS`]; by default the number of CPUs.
fn parallel_runs(jobs: Option<usize>) -> Result<usize, String> {
    match jobs {
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
        Some(j) if (1..=MAX_JOBS).contains(&j) => Ok(j),
        Some(j) => Err(format!("--jobs {j}: give 1 to {MAX_JOBS} parallel runs")),
    }
}

/// The folder of study `study`: a folder holding `study.toml` itself, or a study name
/// looked up in `--studies DIR`, `$CMTLAB_STUDIES`, `scenarios/studies` under the current
/// directory, and the `scenarios/studies` of the checkout this binary was built from.
fn find_study(study: &str, studies: Option<&Path>) -> Result<PathBuf, String> {
    if Path::new(study).join("study.toml").exists() {
        return Ok(PathBuf::from(study));
    }
    let places = study_places(studies);
    places
        .iter()
        .map(|p| p.join(study))
        .find(|d| d.join("study.toml").exists())
        .ok_or_else(|| {
            let looked: Vec<String> = places.iter().map(|p| p.display().to_string()).collect();
            format!(
                "{study}: no such study (looked in {}; give a study folder or --studies DIR)",
                looked.join(", ")
            )
        })
}

/// Where studies are looked up, in order: `--studies DIR`, `$CMTLAB_STUDIES`,
/// `scenarios/studies` under the current directory, and that of the checkout this
/// binary was built from.
fn study_places(studies: Option<&Path>) -> Vec<PathBuf> {
    let mut places: Vec<PathBuf> = Vec::new();
    if let Some(d) = studies {
        places.push(d.to_path_buf());
    }
    if let Some(d) = std::env::var_os("CMTLAB_STUDIES") {
        places.push(PathBuf::from(d));
    }
    places.push(PathBuf::from("scenarios/studies"));
    places.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/studies"));
    places
}
