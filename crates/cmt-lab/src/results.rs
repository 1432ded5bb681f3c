//! Turning a directory of run results into `results.csv` (one row per run) and
//! `runs.jsonl` (one full summary per line), in plan order, streaming: one run file is
//! read at a time, whatever the number of runs.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::error::LabError;
use crate::sweep::{plain, run_file, toml_text_to_json, Plan, RunRecord, RunSpec};

/// Reads one run's record.
pub fn read_run(dir: &Path, id: &str) -> Result<RunRecord, LabError> {
    let path = run_file(dir, id);
    let bytes = std::fs::read(&path)
        .map_err(|e| LabError::at(&path.display().to_string(), format!("cannot read: {e}")))?;
    serde_json::from_slice(&bytes).map_err(|e| {
        LabError::at(
            &path.display().to_string(),
            format!("not a run result: {e}"),
        )
    })
}

/// The last columns of `results.csv`: which build produced the run, and the
/// fingerprint of its inputs (scenario text, overrides, trace contents).
pub const PROVENANCE: [&str; 4] = ["cmtlab_version", "git_commit", "build_source", "inputs"];

/// The metric columns of `results.csv`: every scalar metric, then every per-path one,
/// then every per-flow one (runs with closed-loop background flows).
pub fn metric_columns(plan: &Plan) -> Vec<String> {
    let mut cols: Vec<String> = cmt_sim::METRICS.iter().map(|s| s.to_string()).collect();
    for p in &plan.path_names {
        cols.extend(
            cmt_sim::PATH_METRICS
                .iter()
                .map(|f| format!("paths.{p}.{f}")),
        );
    }
    for n in &plan.flow_names {
        cols.extend(
            cmt_sim::FLOW_METRICS
                .iter()
                .map(|f| format!("flows.{n}.{f}")),
        );
    }
    cols
}

fn num(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| format!("{v}"))
}

/// Writes `results.csv` and `runs.jsonl` of `runs` (from `runs_dir`) into `out`,
/// visiting runs with `each` (used to feed the aggregation without keeping runs in
/// memory).
pub fn write_results(
    plan: &Plan,
    runs: &[&RunSpec],
    runs_dir: &Path,
    out: &Path,
    mut each: impl FnMut(&RunRecord),
) -> Result<(), LabError> {
    let label = out.display().to_string();
    let io = |e: std::io::Error| LabError::at(&label, format!("cannot write: {e}"));
    let cols = metric_columns(plan);
    let (csv_path, jsonl_path) = (out.join("results.csv"), out.join("runs.jsonl"));
    let (csv_tmp, jsonl_tmp) = (
        csv_path.with_extension("csv.tmp"),
        jsonl_path.with_extension("jsonl.tmp"),
    );
    let mut csv = csv::Writer::from_writer(BufWriter::new(File::create(&csv_tmp).map_err(io)?));
    let mut header = vec!["run".to_string(), "run_id".into(), "seed".into()];
    header.extend(plan.axes.iter().map(|a| a.key.clone()));
    let numeric = crate::aggregate::labelled_numeric_axes(plan);
    header.extend(
        numeric
            .iter()
            .map(|&a| format!("{}_value", plan.axes[a].key)),
    );
    header.extend(cols.iter().cloned());
    header.extend(PROVENANCE.iter().map(|c| c.to_string()));
    csv.write_record(&header)
        .map_err(|e| LabError::at(&label, e))?;
    let mut jsonl = BufWriter::new(File::create(&jsonl_tmp).map_err(io)?);
    for r in runs {
        let rec = read_run(runs_dir, &r.id)?;
        let mut row = vec![r.index.to_string(), r.id.clone(), r.seed.to_string()];
        row.extend(
            r.point
                .iter()
                .enumerate()
                .map(|(a, &v)| plain(&plan.axes[a].values[v])),
        );
        row.extend(crate::aggregate::numeric_axis_cells(
            plan, &numeric, &r.point,
        ));
        row.extend(cols.iter().map(|c| num(rec.summary.metric(c))));
        let b = &rec.summary.build;
        row.extend([
            b.version.clone(),
            b.commit.clone(),
            b.source.clone(),
            rec.summary.inputs.clone(),
        ]);
        csv.write_record(&row)
            .map_err(|e| LabError::at(&label, e))?;

        let mut summary =
            serde_json::to_value(&rec.summary).map_err(|e| LabError::at(&label, e))?;
        if let Some(o) = summary.as_object_mut() {
            o.remove("wall_s"); // the one non-deterministic field
        }
        let axes: serde_json::Map<String, serde_json::Value> = r
            .point
            .iter()
            .enumerate()
            .map(|(a, &v)| {
                (
                    plan.axes[a].key.clone(),
                    toml_text_to_json(&plan.axes[a].values[v]),
                )
            })
            .collect();
        let line = serde_json::json!({ "run": r.index, "run_id": r.id, "seed": r.seed, "axes": axes, "summary": summary });
        serde_json::to_writer(&mut jsonl, &line).map_err(|e| LabError::at(&label, e))?;
        jsonl.write_all(b"\n").map_err(io)?;
        each(&rec);
    }
    csv.into_inner()
        .map_err(|e| LabError::at(&label, e))?
        .flush()
        .map_err(io)?;
    jsonl.flush().map_err(io)?;
    std::fs::rename(csv_tmp, csv_path).map_err(io)?;
    std::fs::rename(jsonl_tmp, jsonl_path).map_err(io)?;
    Ok(())
}
