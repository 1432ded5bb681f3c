//! A small two-path sweep's scaffolding: its base scenario, a scratch directory, running
//! a plan to completion and reading back its outputs.
#![allow(dead_code)] // each test binary uses some of these

use std::path::{Path, PathBuf};

use cmt_lab::sweep::{run_plan, Plan, RunOptions, RunOutcome};

/// Two lossy paths (10 Mbit/s and 2 Mbit/s), 5 s.
pub const BASE: &str = r#"
seed = 1
duration = "5s"
[receiver]
rbuf = "64KB"
[[links]]
name = "fast"
rate = "10Mbps"
delay = "10ms"
loss = "1%"
[[links]]
name = "slow"
rate = "2Mbps"
delay = "50ms"
loss = "2%"
[[paths]]
name = "fast"
links = ["fast"]
[[paths]]
name = "slow"
links = ["slow"]
"#;

/// A fresh scratch directory `cmtlab-<tag>-<pid>-<name>` under the system's temp dir.
pub fn tmp(tag: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("cmtlab-{tag}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `plan` (this shard of it) into `out`, writing its outputs when complete.
pub fn run(plan: &Plan, out: &Path, jobs: usize, shard: Option<(usize, usize)>) -> RunOutcome {
    let opts = RunOptions {
        jobs,
        shard,
        out: out.to_path_buf(),
    };
    let o = run_plan(plan, &opts, &|_, _| {}).expect("runs");
    if o.complete {
        cmt_lab::finalize(plan, out, out).expect("finalizes");
    }
    o
}

/// The output files of a finished sweep, by name.
pub fn outputs(dir: &Path) -> Vec<(String, Vec<u8>)> {
    [
        "results.csv",
        "runs.jsonl",
        "aggregate.csv",
        "comparisons.csv",
        "report.md",
    ]
    .iter()
    .map(|f| {
        (
            f.to_string(),
            std::fs::read(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}")),
        )
    })
    .collect()
}
