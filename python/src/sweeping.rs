//! A sweep that Python can interrupt and watch: the sweep runs on a thread of its own;
//! the calling thread, which holds the GIL only between waits, checks for a pending
//! signal every [`POLL`] and reports progress to a Python callable.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use pyo3::prelude::*;

/// How often the caller looks for a signal and reports progress.
const POLL: Duration = Duration::from_millis(100);

/// What the sweep and its watcher share.
#[derive(Default)]
pub struct State {
    /// Set by the watcher on a signal; the sweep starts no run after it.
    pub cancel: AtomicBool,
    done: AtomicUsize,
    total: AtomicUsize,
}

impl State {
    /// Called by the sweep after each run.
    pub fn report(&self, done: usize, total: usize) {
        self.done.fetch_max(done, Ordering::Relaxed);
        self.total.store(total, Ordering::Relaxed);
    }
}

/// Runs `job` on its own thread until it ends. Every [`POLL`] (GIL released in
/// between) a pending signal — its exception, e.g. `KeyboardInterrupt` — cancels the
/// job, waits for the runs under way and is returned; `progress(done, total)` is
/// called when the count moved. The job's own result is returned as it is.
pub fn watch<F>(
    py: Python<'_>,
    job: F,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<Result<(), String>>
where
    F: FnOnce(&State) -> Result<(), String> + Send + 'static,
{
    let state = Arc::new(State::default());
    let shared = state.clone();
    let handle = std::thread::spawn(move || job(&shared));
    let mut shown = usize::MAX;
    loop {
        let finished = py.detach(|| {
            let until = std::time::Instant::now() + POLL;
            while !handle.is_finished() && std::time::Instant::now() < until {
                std::thread::sleep(Duration::from_millis(5));
            }
            handle.is_finished()
        });
        if let Err(e) = py.check_signals() {
            state.cancel.store(true, Ordering::Relaxed);
            let _ = py.detach(|| handle.join());
            return Err(e);
        }
        let (done, total) = (
            state.done.load(Ordering::Relaxed),
            state.total.load(Ordering::Relaxed),
        );
        if let Some(cb) = progress.filter(|_| done != shown && total > 0) {
            shown = done;
            if let Err(e) = cb.call1((done, total)) {
                state.cancel.store(true, Ordering::Relaxed);
                let _ = py.detach(|| handle.join());
                return Err(e);
            }
        }
        if finished {
            break;
        }
    }
    Ok(handle
        .join()
        .unwrap_or_else(|_| Err("the sweep's thread panicked".to_string())))
}
