//! The runner of the `harness = false` test binaries that live in private network
//! namespaces (a process must enter its namespace before any thread starts, which the
//! standard test harness does not allow): named tests run one after another, each
//! within a time limit enforced by a watchdog thread, with one line of outcome each and
//! a summary line, `cargo test`'s way. A test returns what it measured, or its failure;
//! an error starting with "skipped" counts as skipped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One test: its name and the function that runs it on the shared environment `E`.
pub type Test<E> = (&'static str, fn(&E) -> Result<String, String>);

/// Runs the `tests` whose name contains the first non-option argument (all without
/// one), each within `limit`; prints their outcomes and returns the process's exit code
/// (1 if any failed). `what` names the suite in the summary line.
pub fn run<E>(what: &str, env: &E, tests: &[Test<E>], limit: Duration) -> i32 {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    // A hung blocking call must fail the run, not stall CI.
    let deadline = Arc::new(AtomicU64::new(u64::MAX));
    let running = Arc::new(Mutex::new(""));
    let start = Instant::now();
    {
        let (deadline, running) = (deadline.clone(), running.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs(1));
            if start.elapsed().as_secs() > deadline.load(Ordering::Relaxed) {
                let name = *running.lock().unwrap_or_else(|e| e.into_inner());
                println!("test {name} ... FAILED: still running after {limit:?}");
                std::process::exit(1);
            }
        });
    }
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    let chosen: Vec<_> = tests
        .iter()
        .filter(|(name, _)| filter.as_deref().is_none_or(|f| name.contains(f)))
        .collect();
    println!("\nrunning {} {what} tests", chosen.len());
    for (name, test) in chosen {
        deadline.store(
            start.elapsed().as_secs() + limit.as_secs(),
            Ordering::Relaxed,
        );
        *running.lock().unwrap_or_else(|e| e.into_inner()) = name;
        let t = Instant::now();
        match test(env) {
            Ok(m) => {
                passed += 1;
                println!(
                    "test {name} ... ok ({:.1} s): {m}",
                    t.elapsed().as_secs_f64()
                );
            }
            Err(e) if e.starts_with("skipped") => {
                skipped += 1;
                println!("test {name} ... {e}");
            }
            Err(e) => {
                failed += 1;
                println!("test {name} ... FAILED: {e}");
            }
        }
    }
    println!("\n{what}: {passed} passed; {failed} failed; {skipped} skipped\n");
    i32::from(failed > 0)
}

/// `Ok(())` when `ok`, else the error `why()` makes.
pub fn check(ok: bool, why: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(why())
    }
}
