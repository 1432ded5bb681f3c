//! # cmt-lab — experiments over many simulation runs
//!
//! * [`calibrate`] — a scenario of real paths fitted to the packet traces of a transfer;
//! * [`sweep`] — sweep files (TOML) expanded into plans of runs with stable ids, run in
//!   parallel, one result file per run (resumable, shardable);
//! * [`results`] — `results.csv` (a row per run) and `runs.jsonl` (full summaries);
//! * [`stats`], [`aggregate`] — per-group mean, SD, 95 % CI, comparisons, regression;
//! * [`report`] — `aggregate.csv`, `comparisons.csv`, `report.md`;
//! * [`plot`] — SVG and PNG figures (embedded font, no browser);
//! * [`merge`] — combining sharded outputs into exactly what one run would produce;
//! * [`study`] — one-command reproduction of a study with its claims table;
//! * [`verdict`] — a claim judged in size against the paper's value, never on a knife-edge;
//! * [`timeline`] — in-order goodput over time of runs that differ along one axis.

pub mod aggregate;
pub mod calibrate;
pub mod claims;
pub mod error;
pub mod headroom;
pub mod merge;
pub mod names;
pub mod plot;
pub mod real;
pub mod report;
pub mod results;
pub mod stats;
pub mod study;
pub mod sweep;
pub mod timeline;
pub mod verdict;

pub use error::LabError;

use std::path::Path;

/// Writes every output of a complete sweep directory (results, aggregates, report) from
/// its run files. Sharded and unsharded sweeps both end here, so their outputs match.
pub fn finalize(
    plan: &sweep::Plan,
    runs_dir: &Path,
    out: &Path,
) -> Result<aggregate::Aggregate, LabError> {
    let (runs, selection) = sweep::chosen_runs(plan, runs_dir)?;
    let mut agg = aggregate::Aggregator::new(plan);
    results::write_results(plan, &runs, runs_dir, out, |r| agg.add(r))?;
    let agg = agg.finish();
    report::write_tables(plan, &agg, out)?;
    let figures = plot::plot_sweep(plan, &agg, out)?;
    let md = report::markdown(plan, &selection, &agg, &figures);
    sweep::write_atomic(&out.join("report.md"), md.as_bytes())
        .map_err(|e| LabError::at(&out.display().to_string(), e))?;
    Ok(agg)
}
