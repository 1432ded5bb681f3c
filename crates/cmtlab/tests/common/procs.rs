//! Processes of the namespace tests: `cmtlab` started with its output captured, waited
//! for within a limit, and the receiver's temporary files watched.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A process of the test and what it printed.
pub(crate) struct Proc {
    pub(crate) child: Child,
}

/// How a process ended: its exit code (`None`: killed at the limit) and its output.
pub(crate) struct Ended {
    pub(crate) code: Option<i32>,
    pub(crate) output: String,
}

impl Proc {
    /// Waits until the process ends or `limit` passes (then kills it).
    pub(crate) fn finish(mut self, limit: Duration) -> Ended {
        let t = Instant::now();
        let code = loop {
            match self.child.try_wait() {
                Ok(Some(s)) => break s.code(),
                Ok(None) if t.elapsed() < limit => std::thread::sleep(Duration::from_millis(20)),
                _ => {
                    let _ = self.child.kill();
                    let _ = self.child.wait();
                    break None;
                }
            }
        };
        let mut output = String::new();
        for pipe in [
            self.child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read>),
            self.child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read>),
        ]
        .into_iter()
        .flatten()
        {
            let mut pipe = pipe;
            let _ = pipe.read_to_string(&mut output);
        }
        Ended { code, output }
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Starts `bin` with `args`, its output captured.
pub(crate) fn spawn(bin: &Path, args: &[String]) -> Proc {
    let child = Command::new(bin)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cmtlab starts");
    Proc { child }
}

/// Waits until `ok` holds, for at most `limit`; the error names `what`.
pub(crate) fn wait_for(
    what: &str,
    limit: Duration,
    mut ok: impl FnMut() -> bool,
) -> Result<(), String> {
    let t = Instant::now();
    while !ok() {
        if t.elapsed() >= limit {
            return Err(format!("{what}: not within {limit:?}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// The receiver's temporary files beside `out` and their sizes.
pub(crate) fn parts(out: &Path) -> Vec<(PathBuf, u64)> {
    let prefix = format!(".{}.part-", out.file_name().unwrap().to_string_lossy());
    std::fs::read_dir(out.parent().unwrap())
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| (e.path(), e.metadata().map_or(0, |m| m.len())))
                .collect()
        })
        .unwrap_or_default()
}
