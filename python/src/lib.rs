//! The native half of the `cmtlab` Python package (`cmtlab._native`): loading and
//! running scenarios and sweeps with the GIL released, and the bridge that lets Python
//! classes act as schedulers. The pandas layer is `cmtlab/__init__.py`.

use std::path::{Path, PathBuf};

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

mod convert;
mod scheduler;
mod sweeping;

create_exception!(
    cmtlab,
    CmtlabError,
    PyException,
    "A scenario, sweep or output problem, with cmtlab's one-line message (the field, the value and what is wrong)."
);

/// Where a scenario or sweep comes from.
enum Source {
    File(PathBuf),
    Text(String),
}

/// A path (`str` or `os.PathLike` naming a file), TOML text (a `str` with `=` or a
/// newline in it) or a dict.
fn source(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Source> {
    if let Ok(d) = obj.cast::<PyDict>() {
        let table = convert::table(d, "")?;
        let text = toml::to_string(&table)
            .map_err(|e| CmtlabError::new_err(format!("{what} dict: cannot write as TOML: {e}")))?;
        return Ok(Source::Text(text));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        let s: String = s.extract()?;
        return Ok(if s.contains('\n') || s.contains('=') {
            Source::Text(s)
        } else {
            Source::File(PathBuf::from(s))
        });
    }
    if obj.hasattr("__fspath__")? {
        let p: PathBuf = obj.extract()?;
        return Ok(Source::File(p));
    }
    Err(pyo3::exceptions::PyTypeError::new_err(format!(
        "{what}: expected a file path, TOML text or a dict, got {}",
        obj.get_type().name()?
    )))
}

/// The error of a run: the Python exception a scheduler raised, else cmtlab's message.
fn run_error(msg: String) -> PyErr {
    scheduler::take_raised().unwrap_or_else(|| CmtlabError::new_err(msg))
}

/// Loads and runs one scenario, writes its outputs into `out` (and the per-packet
/// trace to `trace`), returns the summary as JSON text.
#[pyfunction]
#[pyo3(signature = (scenario, overrides, out, trace=None))]
fn run(
    py: Python<'_>,
    scenario: &Bound<'_, PyAny>,
    overrides: &Bound<'_, PyAny>,
    out: PathBuf,
    trace: Option<PathBuf>,
) -> PyResult<String> {
    let src = source(scenario, "scenario")?;
    let set = convert::overrides(Some(overrides.cast::<PyDict>()?))?;
    py.detach(move || simulate(src, &set, &out, trace.as_deref()))
        .map_err(run_error)
}

fn simulate(
    src: Source,
    set: &[String],
    out: &Path,
    trace: Option<&Path>,
) -> Result<String, String> {
    let built = match &src {
        Source::File(p) => cmt_sim::load_file(p, set),
        Source::Text(t) => cmt_sim::load_str(t, "scenario", Some("scenario"), set),
    }
    .map_err(|e| e.to_string())?;
    let mut sim = cmt_sim::Simulation::new(built)?;
    if let Some(t) = trace {
        sim.trace_to(t)?;
    }
    let start = std::time::Instant::now();
    sim.try_run(&mut |_| {})?;
    let summary = cmt_sim::Summary::of(&sim, start.elapsed().as_secs_f64());
    if let Some(t) = trace {
        sim.finish_trace()
            .map_err(|e| format!("trace {}: cannot write: {e}", t.display()))?;
    }
    cmt_sim::write_outputs(&sim, &summary, out)
        .map_err(|e| format!("{}: cannot write results: {e}", out.display()))?;
    serde_json::to_string(&summary).map_err(|e| e.to_string())
}

/// Runs a sweep into `out` with `jobs` parallel runs (results, aggregate, report);
/// `seeds` (a count or a list) and `overrides` adjust the sweep file first. The sweep
/// runs on a thread of its own while this one, every 0.1 s, checks for a signal
/// (Ctrl-C, a notebook's "interrupt kernel": no new run starts, the runs under way
/// finish and are kept, `KeyboardInterrupt` is raised) and calls `progress(done,
/// total)` when given.
#[pyfunction]
#[pyo3(signature = (spec, out, jobs, seeds=None, overrides=None, progress=None))]
fn sweep(
    py: Python<'_>,
    spec: &Bound<'_, PyAny>,
    out: PathBuf,
    jobs: usize,
    seeds: Option<&Bound<'_, PyAny>>,
    overrides: Option<&Bound<'_, PyDict>>,
    progress: Option<&Bound<'_, PyAny>>,
) -> PyResult<()> {
    let src = source(spec, "sweep")?;
    let seeds = match seeds {
        None => None,
        Some(s) => Some(match s.extract::<u64>() {
            Ok(n) => cmt_lab::sweep::Seeds::Count(n),
            Err(_) => cmt_lab::sweep::Seeds::List(s.extract::<Vec<u64>>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err("seeds: expected a count or a list of seeds")
            })?),
        }),
    };
    let extra = match overrides {
        Some(d) => convert::table(d, "")?,
        None => toml::Table::new(),
    };
    let job = move |state: &sweeping::State| {
        let tweak = |f: &mut cmt_lab::sweep::SweepFile| {
            if let Some(s) = seeds {
                f.seeds = s;
            }
            f.set.extend(extra);
        };
        let plan = match &src {
            Source::File(p) => cmt_lab::sweep::Plan::load_with(p, tweak),
            Source::Text(t) => {
                cmt_lab::sweep::Plan::from_text(t, "sweep", "sweep", Path::new("."), tweak)
            }
        }
        .map_err(|e| e.to_string())?;
        let opts = cmt_lab::sweep::RunOptions {
            jobs: jobs.max(1),
            shard: None,
            out: out.clone(),
        };
        let report = |done: usize, total: usize| state.report(done, total);
        cmt_lab::sweep::run_plan_until(&plan, &opts, &report, &state.cancel)
            .map_err(|e| e.to_string())?;
        cmt_lab::finalize(&plan, &out, &out).map_err(|e| e.to_string())?;
        Ok(())
    };
    sweeping::watch(py, job, progress)?.map_err(run_error)
}

/// Every algorithm name per extension point: `{kind: [(name, summary, registered)]}`.
#[pyfunction]
fn algorithms(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    fn rows<F: ?Sized>(t: &cmt_core::registry::Table<F>) -> Vec<(String, String, bool)> {
        t.entries()
            .iter()
            .map(|e| (e.name.clone(), e.summary.clone(), e.extension))
            .collect()
    }
    let d = PyDict::new(py);
    d.set_item("scheduler", cmt_core::sched::REGISTRY.read(rows))?;
    d.set_item("rtx", cmt_core::rtx::REGISTRY.read(rows))?;
    d.set_item("cc", cmt_core::cc::REGISTRY.read(rows))?;
    d.set_item("loss_model", cmt_sim::loss_model::REGISTRY.read(rows))?;
    Ok(d)
}

/// The build that produces results (version, commit, source hash, extensions).
#[pyfunction]
fn build_info() -> PyResult<String> {
    serde_json::to_string(&cmt_sim::build()).map_err(|e| CmtlabError::new_err(e.to_string()))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("CmtlabError", m.py().get_type::<CmtlabError>())?;
    m.add_class::<scheduler::PathView>()?;
    m.add_class::<scheduler::Paths>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add_function(wrap_pyfunction!(scheduler::register_scheduler, m)?)?;
    Ok(())
}
