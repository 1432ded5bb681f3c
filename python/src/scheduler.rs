//! Schedulers written in Python.
//!
//! A Python class with a `select(paths)` method (and optionally `begin(paths)`,
//! `on_sent(path, tsn, nbytes)`, `on_rtt_sample(path, rtt_s)`) is registered in the
//! process-wide scheduler table under a name scenario files can use. Each association
//! gets its own instance, `cls(**scheduler_params)`. The core calls the hooks exactly
//! where it calls a built-in scheduler's ([`cmt_core::sched::Scheduler`]), so a Python
//! port of a built-in scheduler makes the same decisions.
//!
//! Runs release the GIL; every hook takes it back for the call. A hook that raises,
//! or a `select` that returns something other than a path index or `None`, stops the
//! run: the failure is recorded ([`cmt_core::extension_failure`]), the scheduler sends
//! nothing more, and the Python call that started the run re-raises the exception.

use std::cell::RefCell;
use std::sync::Arc;

use cmt_core::registry::Extension;
use cmt_core::sched::{SchedContext, Scheduler, SchedulerFactory};
use cmt_core::{ParamError, Params, PathId, PathState, PathView as CorePath};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

thread_local! {
    /// The exception a Python hook raised on this thread, for the caller to re-raise.
    static RAISED: RefCell<Option<PyErr>> = const { RefCell::new(None) };
}

/// The exception a hook raised during the run on this thread, if one did.
pub fn take_raised() -> Option<PyErr> {
    RAISED.with(|r| r.borrow_mut().take())
}

/// What a Python scheduler sees of one path (a read-only snapshot).
#[pyclass(frozen, get_all, module = "cmtlab")]
pub struct PathView {
    /// Index of the path (0-based, in scenario order).
    id: usize,
    /// `"active"`, `"potentially-failed"` or `"inactive"`.
    state: &'static str,
    /// Congestion window, bytes.
    cwnd: u64,
    /// Slow-start threshold, bytes.
    ssthresh: u64,
    /// Bytes in flight.
    flight: u64,
    /// Smoothed RTT in seconds (`None` before the first sample).
    srtt: Option<f64>,
    /// RTT variation, seconds.
    rttvar: f64,
    /// Smallest RTT sample, seconds.
    min_rtt: Option<f64>,
    /// Retransmission timeout, seconds.
    rto: f64,
    /// T3-rtx timeouts so far.
    timeouts: u32,
    /// Consecutive timeouts since the path was last acknowledged.
    error_count: u32,
    /// Loss rate (configured or estimated).
    loss_rate: f64,
    /// Capacity in bytes/s when known.
    capacity: Option<f64>,
    /// Rate the receiver advertised, bytes/s (receiver-driven CMT).
    advertised_rate: Option<f64>,
    /// Whether new data may go on this path now.
    can_send: bool,
}

#[pymethods]
impl PathView {
    fn __repr__(&self) -> String {
        format!(
            "PathView(id={}, state={}, cwnd={}, flight={}, srtt={:?}, can_send={})",
            self.id, self.state, self.cwnd, self.flight, self.srtt, self.can_send
        )
    }
}

impl PathView {
    fn of(p: &CorePath) -> Self {
        PathView {
            id: p.id.0,
            state: match p.state {
                PathState::Active => "active",
                PathState::PotentiallyFailed => "potentially-failed",
                PathState::Inactive => "inactive",
                PathState::Standby => "standby",
                PathState::Unconfirmed => "unconfirmed",
                PathState::Removed => "removed",
            },
            cwnd: p.cwnd,
            ssthresh: p.ssthresh,
            flight: p.flight,
            srtt: p.srtt.map(|d| d.as_secs_f64()),
            rttvar: p.rttvar.as_secs_f64(),
            min_rtt: p.min_rtt.map(|d| d.as_secs_f64()),
            rto: p.rto.as_secs_f64(),
            timeouts: p.timeouts,
            error_count: p.error_count,
            loss_rate: p.loss_rate,
            capacity: p.capacity,
            advertised_rate: p.advertised_rate,
            can_send: p.can_send,
        }
    }
}

/// The paths at one decision: a sequence of [`PathView`]s, plus the moment's context.
#[pyclass(frozen, sequence, module = "cmtlab")]
pub struct Paths {
    items: Py<PyList>,
    /// Simulated time, seconds.
    #[pyo3(get)]
    now: f64,
    /// Peer receive window left, bytes.
    #[pyo3(get)]
    peer_rwnd: u64,
    /// User bytes of the chunk to place.
    #[pyo3(get)]
    chunk_len: u32,
    /// User bytes waiting to be sent.
    #[pyo3(get)]
    queued_bytes: u64,
}

#[pymethods]
impl Paths {
    fn __len__(&self, py: Python<'_>) -> usize {
        self.items.bind(py).len()
    }
    fn __getitem__<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyAny>> {
        self.items.bind(py).as_any().get_item(i)
    }
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(self.items.bind(py).as_any().try_iter()?.into_any())
    }
    fn __repr__(&self, py: Python<'_>) -> String {
        format!("Paths(now={}, {})", self.now, self.items.bind(py))
    }
}

fn paths<'py>(py: Python<'py>, ctx: &SchedContext<'_>) -> PyResult<Bound<'py, Paths>> {
    let items = PyList::empty(py);
    for p in ctx.paths {
        items.append(Bound::new(py, PathView::of(p))?)?;
    }
    Bound::new(
        py,
        Paths {
            items: items.unbind(),
            now: ctx.now.as_secs_f64(),
            peer_rwnd: ctx.peer_rwnd,
            chunk_len: ctx.chunk_len,
            queued_bytes: ctx.queued_bytes,
        },
    )
}

/// Which optional hooks the class defines.
#[derive(Clone, Copy, Debug)]
struct Hooks {
    begin: bool,
    on_sent: bool,
    on_rtt_sample: bool,
}

impl Hooks {
    fn of(obj: &Bound<'_, PyAny>) -> PyResult<Hooks> {
        Ok(Hooks {
            begin: obj.hasattr("begin")?,
            on_sent: obj.hasattr("on_sent")?,
            on_rtt_sample: obj.hasattr("on_rtt_sample")?,
        })
    }
}

/// One association's Python scheduler.
struct PyScheduler {
    name: &'static str,
    /// The instance; `None` once a hook failed (the scheduler then stays silent).
    obj: Option<Py<PyAny>>,
    hooks: Hooks,
}

impl PyScheduler {
    /// Records a failure and silences the scheduler.
    fn failed(&mut self, what: &str, err: PyErr) {
        let msg = Python::attach(|py| {
            format!(
                "scheduler `{}`: {what}: {err}",
                self.name,
                err = describe(py, &err)
            )
        });
        cmt_core::extension_failure::fail(msg);
        RAISED.with(|r| {
            let mut r = r.borrow_mut();
            if r.is_none() {
                *r = Some(err);
            }
        });
        self.obj = None;
    }

    /// Calls `hook` with the arguments `args` makes, if the instance is still alive.
    fn call(
        &mut self,
        hook: &str,
        args: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyTuple>>,
    ) -> Option<Py<PyAny>> {
        let obj = self.obj.as_ref()?;
        let r = Python::attach(|py| {
            let a = args(py)?;
            obj.bind(py).call_method1(hook, a).map(Bound::unbind)
        });
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.failed(&format!("{hook} raised"), e);
                None
            }
        }
    }
}

/// `TypeError: message`, the way Python prints an exception's last line.
fn describe(py: Python<'_>, err: &PyErr) -> String {
    let ty = err
        .get_type(py)
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    format!("{ty}: {}", err.value(py))
}

impl Scheduler for PyScheduler {
    fn begin(&mut self, ctx: &SchedContext<'_>) {
        if self.hooks.begin {
            self.call("begin", |py| (paths(py, ctx)?,).into_pyobject(py));
        }
    }

    fn select(&mut self, ctx: &SchedContext<'_>) -> Option<PathId> {
        let n = ctx.paths.len();
        let chosen = self.call("select", |py| (paths(py, ctx)?,).into_pyobject(py))?;
        let parsed = Python::attach(|py| {
            let v = chosen.bind(py);
            if v.is_none() {
                return Ok(None);
            }
            match v.extract::<usize>() {
                Ok(i) if i < n => Ok(Some(PathId(i))),
                _ => Err(v.repr().map(|r| r.to_string()).unwrap_or_default()),
            }
        });
        match parsed {
            Ok(p) => p,
            Err(got) => {
                let err = pyo3::exceptions::PyValueError::new_err(format!(
                    "select returned {got}, expected a path index from 0 to {} or None",
                    n.saturating_sub(1)
                ));
                self.failed("bad choice", err);
                None
            }
        }
    }

    fn on_sent(&mut self, path: PathId, tsn: u64, bytes: u32) {
        if self.hooks.on_sent {
            self.call("on_sent", |py| (path.0, tsn, bytes).into_pyobject(py));
        }
    }

    fn on_rtt_sample(&mut self, _now: cmt_core::Time, path: PathId, rtt: cmt_core::Duration) {
        if self.hooks.on_rtt_sample {
            let s = rtt.as_secs_f64();
            self.call("on_rtt_sample", |py| (path.0, s).into_pyobject(py));
        }
    }
}

/// Builds instances of a Python class with one association's parameters.
struct PyFactory {
    name: &'static str,
    cls: Py<PyAny>,
    kwargs: Py<PyDict>,
    hooks: Hooks,
}

impl SchedulerFactory for PyFactory {
    fn name(&self) -> &'static str {
        self.name
    }

    fn build(&self, _num_paths: usize) -> Box<dyn Scheduler> {
        let mut s = PyScheduler {
            name: self.name,
            obj: None,
            hooks: self.hooks,
        };
        let made = Python::attach(|py| {
            self.cls
                .bind(py)
                .call((), Some(self.kwargs.bind(py)))
                .map(Bound::unbind)
        });
        match made {
            Ok(obj) => s.obj = Some(obj),
            Err(e) => s.failed("constructor raised", e),
        }
        Box::new(s)
    }
}

/// Checks the class against `params` (one trial instance) and makes its factory.
fn factory(name: &'static str, cls: &Py<PyAny>, params: &Params) -> Result<PyFactory, ParamError> {
    Python::attach(|py| {
        let bad = |e: PyErr| ParamError(format!("scheduler `{name}`: {}", describe(py, &e)));
        let kwargs = crate::convert::params_to_kwargs(py, params).map_err(bad)?;
        let trial = cls.bind(py).call((), Some(&kwargs)).map_err(bad)?;
        if !trial.hasattr("select").map_err(bad)? {
            return Err(ParamError(format!(
                "scheduler `{name}`: the class has no select(paths) method"
            )));
        }
        Ok(PyFactory {
            name,
            cls: cls.clone_ref(py),
            kwargs: kwargs.unbind(),
            hooks: Hooks::of(&trial).map_err(bad)?,
        })
    })
}

/// Registers `cls` as scheduler `name` (see the module docs).
#[pyfunction]
#[pyo3(signature = (name, cls, summary, fingerprint, replace))]
pub fn register_scheduler(
    name: &str,
    cls: Py<PyAny>,
    summary: &str,
    fingerprint: &str,
    replace: bool,
) -> PyResult<()> {
    // Factories name themselves with a 'static str; one small leak per registration.
    let leaked: &'static str = Box::leak(name.to_string().into_boxed_str());
    let build: cmt_core::registry::Builder<dyn SchedulerFactory> =
        Arc::new(move |p| Ok(Box::new(factory(leaked, &cls, p)?)));
    cmt_core::sched::REGISTRY
        .register_extension(Extension {
            name,
            summary,
            fingerprint,
            replace,
            build,
        })
        .map_err(|e| crate::CmtlabError::new_err(e.to_string()))
}
