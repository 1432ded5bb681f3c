//! What the ns-2 benches share: finding `ns` and the case script, a work directory,
//! and process timing (CPU time of child processes, batches, a limit for hung runs).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use nix::sys::resource::{getrusage, UsageWho};

/// CPU time (user + system) of every child waited for so far.
fn children_cpu() -> Duration {
    let u = getrusage(UsageWho::RUSAGE_CHILDREN).expect("getrusage");
    let us = |t: nix::sys::time::TimeVal| t.tv_sec() as u64 * 1_000_000 + t.tv_usec() as u64;
    Duration::from_micros(us(u.user_time()) + us(u.system_time()))
}

/// Runs `cmd args` `batch` times per batch, `repeats` batches; CPU seconds per run of
/// the least disturbed batch. `None` when a run failed or ran past `limit`.
pub fn cpu_per_run(
    cmd: &Path,
    args: &[String],
    dir: &Path,
    (repeats, batch): (u32, u32),
    limit: Duration,
) -> Option<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..repeats {
        let before = children_cpu();
        for _ in 0..batch {
            let mut child = Command::new(cmd)
                .args(args)
                .current_dir(dir)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .ok()?;
            let start = std::time::Instant::now();
            // ns-2.35 sometimes hangs: a run past the limit is killed and the case has
            // no figure (a hung run is never averaged).
            loop {
                if let Some(status) = child.try_wait().ok()? {
                    if !status.success() {
                        return None;
                    }
                    break;
                }
                if start.elapsed() > limit {
                    let _ = child.kill();
                    let _ = child.wait();
                    return None;
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        let per_run = (children_cpu() - before).as_secs_f64() / batch as f64;
        best = best.min(per_run);
    }
    Some(best)
}

pub fn env_u32(name: &str, default: u32) -> u32 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&v| v > 0)
        .unwrap_or(default)
}

/// The full path of `prog` on `PATH`.
pub fn which(prog: &str) -> Option<PathBuf> {
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(prog))
        .find(|p| p.is_file())
}

/// Where a bench runs: ns-2, its case script, the cmtlab binary, a temporary work
/// directory (removed when dropped), the timing plan and the limit for a hung run.
pub struct Bench {
    pub ns: PathBuf,
    pub tcl: PathBuf,
    pub cmtlab: PathBuf,
    pub work: PathBuf,
    /// (batches, runs per batch): `NS2_RATIO_REPEATS` (default 3), `NS2_RATIO_BATCH`.
    pub plan: (u32, u32),
    pub limit: Duration,
}

impl Bench {
    /// Sets bench `name` up with `batch` runs per batch unless `NS2_RATIO_BATCH` says
    /// otherwise; `None` (and a line saying so) when `ns` is not installed.
    pub fn setup(name: &str, batch: u32, cmtlab: PathBuf) -> Option<Bench> {
        let Some(ns) = which("ns") else {
            println!(
                "{name}: `ns` (ns-2.35) is not installed (Debian: apt-get install ns2); nothing measured"
            );
            return None;
        };
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let work = std::env::temp_dir().join(format!("cmtlab-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&work).expect("temporary directory");
        Some(Bench {
            ns,
            tcl: root.join("tools/ns2/case.tcl"),
            cmtlab,
            work,
            plan: (
                env_u32("NS2_RATIO_REPEATS", 3),
                env_u32("NS2_RATIO_BATCH", batch),
            ),
            limit: Duration::from_secs(120),
        })
    }
}

impl Drop for Bench {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.work);
    }
}
