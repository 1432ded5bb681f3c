//! `cmtlab merge DIR...`: combine the run files of sharded sweeps into one output
//! directory, after checking that every planned run is present.

use std::path::Path;

use crate::error::LabError;
use crate::sweep::{run_file, write_atomic, Plan};

/// Reads `plan.json` of a sweep output directory.
pub fn read_plan(dir: &Path) -> Result<Plan, LabError> {
    let p = dir.join("plan.json");
    let bytes = std::fs::read(&p).map_err(|e| {
        LabError::at(
            &p.display().to_string(),
            format!("cannot read (not a sweep output directory?): {e}"),
        )
    })?;
    serde_json::from_slice(&bytes).map_err(|e| LabError::at(&p.display().to_string(), e))
}

/// Copies every planned run from `dirs` into `out/runs` and writes the sweep outputs.
/// Fails, listing the missing runs, when any planned run has no result (for a
/// sequential sweep: when a run its stopping rule needs has none — the runs found are
/// merged all the same, so running the sweep into `out` finishes it).
pub fn merge(dirs: &[&Path], out: &Path) -> Result<Plan, LabError> {
    let first = dirs
        .first()
        .ok_or_else(|| LabError("merge: give at least one directory".into()))?;
    let plan = read_plan(first)?;
    let fp = plan.fingerprint();
    for d in &dirs[1..] {
        let other = read_plan(d)?;
        if other.build.source != plan.build.source {
            return Err(LabError::at(
                &d.display().to_string(),
                format!(
                    "was run by another build (source {}, commit {}) than {} (source {}, \
                     commit {}): rerun the shard with one build",
                    other.build.source,
                    other.build.commit,
                    first.display(),
                    plan.build.source,
                    plan.build.commit
                ),
            ));
        }
        if other.fingerprint() != fp || other.sequential != plan.sequential {
            return Err(LabError::at(
                &d.display().to_string(),
                format!("belongs to another sweep than {}", first.display()),
            ));
        }
    }
    let mut missing = Vec::new();
    let mut sources = Vec::with_capacity(plan.runs.len());
    for r in &plan.runs {
        match dirs.iter().map(|d| run_file(d, &r.id)).find(|p| p.exists()) {
            Some(p) => sources.push((r, p)),
            // A sequential sweep needs only the runs its stopping rule chose: which
            // those are, `finalize` decides from the merged results.
            None if plan.sequential.is_some() => {}
            None => missing.push(format!(
                "#{} {} (seed {}; {})",
                r.index,
                r.id,
                r.seed,
                plan.point_label(&r.point)
            )),
        }
    }
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(10).map(String::as_str).collect();
        let more = if missing.len() > 10 {
            format!(" and {} more", missing.len() - 10)
        } else {
            String::new()
        };
        return Err(LabError(format!(
            "merge: {} of {} runs missing: {}{more}",
            missing.len(),
            plan.runs.len(),
            shown.join("; ")
        )));
    }
    let label = out.display().to_string();
    let io = |e: std::io::Error| LabError::at(&label, format!("cannot write: {e}"));
    std::fs::create_dir_all(out.join("runs")).map_err(io)?;
    let plan_json = serde_json::to_vec_pretty(&plan).map_err(|e| LabError::at(&label, e))?;
    write_atomic(&out.join("plan.json"), &plan_json).map_err(io)?;
    for (r, src) in &sources {
        let dst = run_file(out, &r.id);
        if *src != dst {
            std::fs::copy(src, &dst).map_err(io)?;
        }
    }
    crate::finalize(&plan, out, out)?;
    Ok(plan)
}
