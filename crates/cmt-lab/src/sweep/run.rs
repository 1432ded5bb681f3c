//! Running a plan: in parallel, one result file per run, written atomically, so an
//! interrupted or sharded sweep resumes where it stopped.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::plan::{Plan, RunSpec};
use super::sequential::{select, Selection};
use crate::error::LabError;

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Worker threads.
    pub jobs: usize,
    /// Run only runs whose index ≡ I (mod N).
    pub shard: Option<(usize, usize)>,
    /// Output directory.
    pub out: PathBuf,
}

/// What a call did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutcome {
    /// Runs simulated now.
    pub ran: usize,
    /// Runs of this shard skipped because their result already existed.
    pub skipped: usize,
    /// Every run the sweep needs has a result in the output directory.
    pub complete: bool,
    /// The runs the sweep needs (for a sequential sweep: so far, and the seeds of each
    /// grid point).
    pub selection: Selection,
}

/// One run's result file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunRecord {
    /// Plan index.
    pub run: usize,
    /// Stable id.
    pub run_id: String,
    /// Seed.
    pub seed: u64,
    /// Grid point (value indexes per axis).
    pub point: Vec<usize>,
    /// The simulator's summary.
    pub summary: cmt_sim::Summary,
}

/// Where a run's result lives.
pub fn run_file(dir: &Path, id: &str) -> PathBuf {
    dir.join("runs").join(format!("{id}.json"))
}

/// Writes `bytes` to `path` through a temporary file and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(tmp, path)
}

fn simulate(plan: &Plan, r: &RunSpec) -> Result<RunRecord, String> {
    let built = plan.scenario(r)?;
    let mut sim = cmt_sim::Simulation::new(built)?;
    let start = Instant::now();
    sim.try_run(&mut |_| {})?;
    let summary = cmt_sim::Summary::of(&sim, start.elapsed().as_secs_f64());
    Ok(RunRecord {
        run: r.index,
        run_id: r.id.clone(),
        seed: r.seed,
        point: r.point.clone(),
        summary,
    })
}

/// The error of a sweep stopped by its `cancel` flag.
pub const INTERRUPTED: &str = "interrupted: the runs finished so far are kept, and a rerun resumes";

/// Whether `old` (a plan.json) is `plan` but for the build that planned it (and so the
/// run ids, which include the build's source hash).
fn same_sweep_other_build(old: &[u8], plan: &Plan) -> bool {
    let Ok(mut old) = serde_json::from_slice::<Plan>(old) else {
        return false;
    };
    let mut new = plan.clone();
    for p in [&mut old, &mut new] {
        p.build = cmt_sim::Build::default();
        p.runs.iter_mut().for_each(|r| r.id.clear());
    }
    serde_json::to_vec(&old).ok() == serde_json::to_vec(&new).ok()
}

/// Creates the output directory and writes `plan.json`, refusing one of another sweep.
fn prepare(plan: &Plan, opts: &RunOptions) -> Result<(), LabError> {
    let out = opts.out.display().to_string();
    let io = |e: std::io::Error| LabError::at(&out, format!("cannot write: {e}"));
    std::fs::create_dir_all(opts.out.join("runs")).map_err(io)?;
    let plan_json = serde_json::to_vec_pretty(plan).map_err(|e| LabError::at(&out, e))?;
    let plan_path = opts.out.join("plan.json");
    match std::fs::read(&plan_path) {
        Ok(old) if old == plan_json => {}
        // The same sweep planned by another build (an edited scheduler, say): its runs
        // have other ids, so nothing of the earlier build is reused or mixed in.
        Ok(old) if same_sweep_other_build(&old, plan) => {
            write_atomic(&plan_path, &plan_json).map_err(io)?
        }
        Ok(_) => {
            return Err(LabError::at(
                &out,
                "holds results of a different sweep (plan.json differs); use another --out",
            ));
        }
        Err(_) => write_atomic(&plan_path, &plan_json).map_err(io)?,
    }
    Ok(())
}

/// Runs the plan's runs (of this shard) that have no result yet. `progress(done,
/// total)` is called after each run, from worker threads.
pub fn run_plan(
    plan: &Plan,
    opts: &RunOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<RunOutcome, LabError> {
    run_plan_until(plan, opts, progress, &AtomicBool::new(false))
}

/// [`run_plan`], stopping once `cancel` is set: no run starts after that, the runs
/// under way finish and are written (so the sweep resumes where it stopped), and the
/// call returns [`INTERRUPTED`].
pub fn run_plan_until(
    plan: &Plan,
    opts: &RunOptions,
    progress: &(dyn Fn(usize, usize) + Sync),
    cancel: &AtomicBool,
) -> Result<RunOutcome, LabError> {
    let out = opts.out.display().to_string();
    let io = |e: std::io::Error| LabError::at(&out, format!("cannot write: {e}"));
    prepare(plan, opts)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.jobs.max(1))
        .build()
        .map_err(|e| LabError::at(&out, e))?;
    let mine = |r: &RunSpec| opts.shard.is_none_or(|(i, n)| r.index % n == i);
    let mut known = Known::default();
    let mut ran = 0;
    // Stage by stage: a fixed-seed plan has one; a sequential one asks for more seeds
    // where its estimates are not yet precise, until none does.
    loop {
        let selection = known.select(plan, &opts.out)?;
        let todo: Vec<&RunSpec> = selection
            .missing
            .iter()
            .map(|&i| &plan.runs[i])
            .filter(|r| mine(r))
            .collect();
        if todo.is_empty() {
            let of_mine = selection.runs.iter().filter(|&&i| mine(&plan.runs[i]));
            return Ok(RunOutcome {
                ran,
                skipped: of_mine.count() - ran,
                complete: selection.settled(),
                selection,
            });
        }
        let base = ran;
        let total = base + todo.len();
        let done = AtomicUsize::new(base);
        pool.install(|| {
            todo.par_iter().try_for_each(|r| {
                if cancel.load(Ordering::Relaxed) {
                    return Err(LabError(INTERRUPTED.into()));
                }
                let rec = simulate(plan, r)
                    .map_err(|e| LabError(format!("run {} ({}): {e}", r.index, r.id)))?;
                let bytes = serde_json::to_vec(&rec).map_err(|e| LabError::at(&out, e))?;
                write_atomic(&run_file(&opts.out, &r.id), &bytes).map_err(io)?;
                progress(done.fetch_add(1, Ordering::Relaxed) + 1, total);
                Ok::<(), LabError>(())
            })
        })?;
        ran = total;
    }
}

/// Results read so far from an output directory, by plan index (only a sequential
/// plan's stopping rule needs their values).
#[derive(Default)]
struct Known(std::collections::BTreeMap<usize, cmt_sim::Summary>);

impl Known {
    /// The runs `plan` needs, reading the results in `dir` not read before.
    fn select(&mut self, plan: &Plan, dir: &Path) -> Result<Selection, LabError> {
        if plan.sequential.is_none() {
            return Ok(select(plan, &OnDisk(dir)));
        }
        for r in &plan.runs {
            if self.0.contains_key(&r.index) {
                continue;
            }
            let file = run_file(dir, &r.id);
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            let rec: RunRecord = serde_json::from_slice(&bytes)
                .map_err(|e| LabError::at(&file.display().to_string(), e))?;
            self.0.insert(r.index, rec.summary);
        }
        Ok(select(plan, &self.0))
    }
}

/// Results present as files (values are not needed for a fixed-seed plan).
struct OnDisk<'a>(&'a Path);

impl super::Results for OnDisk<'_> {
    fn has(&self, r: &RunSpec) -> bool {
        run_file(self.0, &r.id).exists()
    }
    fn value(&self, _: &RunSpec, _: &str) -> Option<f64> {
        None
    }
}

/// The runs a finished sweep in `dir` consists of: every run of a fixed-seed plan,
/// those its stopping rule chose for a sequential one (an error while that is not
/// settled, naming how many results are missing).
pub fn chosen_runs<'p>(
    plan: &'p Plan,
    dir: &Path,
) -> Result<(Vec<&'p RunSpec>, Selection), LabError> {
    let selection = Known::default().select(plan, dir)?;
    if !selection.settled() {
        return Err(LabError::at(
            &dir.display().to_string(),
            format!(
                "{} of the {} runs the sweep needs so far have no result: run the sweep \
                 (or its shards) into this directory to finish it",
                selection.missing.len(),
                selection.runs.len()
            ),
        ));
    }
    Ok((
        selection.runs.iter().map(|&i| &plan.runs[i]).collect(),
        selection,
    ))
}
