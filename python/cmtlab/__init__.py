"""cmtlab from Python: run concurrent multipath transfer simulations and sweeps, read
their results as pandas DataFrames, and prototype schedulers in Python.

    import cmtlab
    r = cmtlab.run("scenarios/demo.toml", set={"duration": "20s"}, seed=3)
    r.summary["goodput_mbps"]          # the summary, as a dict
    r.timeseries, r.paths_timeseries   # DataFrames (one row per time bin)
    r.path_table                       # per-path totals

    s = cmtlab.sweep("scenarios/studies/demo/rbuf.toml", jobs=2)
    s.aggregate                        # mean and CI per grid point and metric

Scenarios are files, TOML text or dicts; ``set`` takes the command line's ``--set``
keys (``"receiver.rbuf": "32KB"``, ``"links.wifi-access.rate": "5Mbps"``). Runs release
the GIL; a sweep runs ``jobs`` simulations at once (all cores by default).

Errors carry cmtlab's one-line message in a :class:`CmtlabError`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import types
import uuid
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from . import _native
from ._native import CmtlabError, Paths, PathView
from .results import RunResult, SweepResult, load

#: The version of the cmtlab build this package wraps.
__version__: str = json.loads(_native.build_info())["version"]

__all__ = [
    "CmtlabError",
    "Paths",
    "PathView",
    "RunResult",
    "SweepResult",
    "algorithms",
    "build_info",
    "load",
    "register_scheduler",
    "run",
    "scheduler",
    "sweep",
]

Scenario = Union[str, "os.PathLike[str]", Mapping[str, Any]]


def run(
    scenario: Scenario,
    set: Optional[Mapping[str, Any]] = None,
    seed: Optional[int] = None,
    trace: bool = False,
    out: Union[str, "os.PathLike[str]", None] = None,
) -> RunResult:
    """Runs one scenario and returns its results.

    ``scenario`` is a file path, TOML text or a dict with the scenario file's keys.
    ``set`` overrides keys (dotted names, as ``--set`` on the command line), ``seed``
    sets the run's seed. ``trace=True`` also records the per-packet trace
    (``RunResult.trace``). The outputs are written to ``out`` when given (as
    ``cmtlab run --out``), else to a temporary directory that is removed afterwards.
    """
    overrides = dict(set or {})
    if seed is not None:
        overrides["seed"] = int(seed)
    with _output_dir(out) as dir:
        trace_file = os.path.join(dir, "trace.csv") if trace else None
        _native.run(_scenario_arg(scenario), overrides, dir, trace_file)
        return load(dir)


def sweep(
    spec: Scenario,
    jobs: Optional[int] = None,
    out: Union[str, "os.PathLike[str]", None] = None,
    seeds: Union[int, Sequence[int], None] = None,
    set: Optional[Mapping[str, Any]] = None,
    progress: Union[bool, Callable[[int, int], Any]] = True,
) -> SweepResult:
    """Runs a sweep (a grid of variations times seeds) and returns its results.

    ``spec`` is a sweep file path, TOML text or a dict (its ``base`` scenario is then
    looked up from the current directory). ``jobs`` runs that many simulations at once
    (default: every core). ``seeds`` replaces the sweep's seeds (a count or a list) and
    ``set`` adds overrides for every run, e.g. a shorter ``duration``. With ``out`` the
    results stay there (and a later call resumes: finished runs are not run again).

    Ctrl-C (or a notebook's "interrupt kernel") stops the sweep within about a second:
    no run starts after it, the runs under way finish and are kept in ``out``, and
    ``KeyboardInterrupt`` is raised. ``progress=True`` shows a progress bar when
    ``tqdm`` is installed (``tqdm.auto``: a widget in notebooks, a line on terminals);
    ``False`` shows nothing; a callable is called as ``progress(done, total)``.
    """
    jobs = jobs or os.cpu_count() or 1
    with _output_dir(out) as dir, _progress(progress) as report:
        _native.sweep(_scenario_arg(spec), dir, int(jobs), seeds, dict(set or {}), report)
        return load(dir)


def register_scheduler(
    name: str, cls: type, summary: str = "", replace: bool = False
) -> type:
    """Registers a Python class as scheduler ``name`` for scenario files and sweeps.

    The class needs ``select(self, paths) -> int | None``: the index of the path for
    the next new chunk, or ``None`` to send no new data now. ``paths`` is a sequence
    of :class:`PathView` (``id``, ``state``, ``cwnd``, ``ssthresh``, ``flight``,
    ``srtt``, ``rttvar``, ``min_rtt``, ``rto``, ``timeouts``, ``error_count``, ``loss_rate``,
    ``capacity``, ``advertised_rate``, ``can_send``; times in seconds) with the
    moment's ``now``, ``peer_rwnd``, ``chunk_len`` and ``queued_bytes``. Optional
    hooks: ``begin(self, paths)`` at each transmission opportunity,
    ``on_sent(self, path, tsn, nbytes)``, ``on_rtt_sample(self, path, rtt_s)``.
    Every association gets its own instance, ``cls(**scheduler_params)``.

    ``replace=True`` replaces an earlier registration of ``name`` (a notebook cell
    run again); built-in names can never be replaced. What the class does — the
    bytecode and constants of its methods, and of the functions and values they use —
    is part of the results' build hash, so a sweep never reuses results of an edited
    scheduler, wherever its source lives (a file, a notebook cell, ``exec``); a class
    that holds something that cannot be fingerprinted gets a fresh hash each time, with
    a warning.
    """
    _native.register_scheduler(
        name, cls, summary or (cls.__doc__ or "").strip().split("\n")[0], _fingerprint(cls), replace
    )
    return cls


def scheduler(name: str, summary: str = "", replace: bool = False):
    """Class decorator form of :func:`register_scheduler`."""

    def deco(cls: type) -> type:
        return register_scheduler(name, cls, summary, replace)

    return deco


def algorithms() -> dict:
    """Every algorithm name per extension point (``scheduler``, ``rtx``, ``cc``,
    ``loss_model``) as a list of ``(name, summary, registered_here)``."""
    return _native.algorithms()


def build_info() -> dict:
    """The build results record: version, commit, source hash, registered names."""
    return json.loads(_native.build_info())


def _scenario_arg(scenario: Scenario) -> Any:
    if isinstance(scenario, Mapping):
        return dict(scenario)
    if isinstance(scenario, os.PathLike):
        return os.fspath(scenario)
    return scenario


def _fingerprint(cls: type) -> str:
    """A hash of what the class *does*: the bytecode, constants and names of every
    method it and its bases define, recursively through nested functions, closures,
    default values and the module-level functions and constants they use, plus its
    plain class attributes; the Python version is part of it. Independent of where the
    source lives, so a class typed into a notebook cell or built by ``exec`` gets a new
    fingerprint when its behaviour changes. Where something cannot be fingerprinted (an
    attribute or a global that is neither code nor a plain value), the fingerprint is
    random, so no result that depends on the class is ever reused, and a warning says
    which attribute."""
    walk = _Fingerprint()
    walk.add(f"python {sys.version_info[0]}.{sys.version_info[1]}")
    for klass in cls.__mro__:
        walk.klass(klass)
    if walk.unknown is not None:
        warnings.warn(
            f"cmtlab: scheduler class {cls.__name__}: cannot fingerprint {walk.unknown}; "
            "results that use it will not be reused",
            stacklevel=3,
        )
        return uuid.uuid4().hex[:16]
    return walk.digest.hexdigest()[:16]


class _Fingerprint:
    """Feeds code objects and plain values into a SHA-256, each once."""

    PLAIN = (type(None), bool, int, float, complex, str, bytes)

    def __init__(self):
        self.digest = hashlib.sha256()
        self.seen = set()
        self.unknown = None

    def add(self, text: str):
        self.digest.update(text.encode())
        self.digest.update(b"\0")

    def value(self, v, where: str):
        if isinstance(v, self.PLAIN):
            self.add(f"{type(v).__name__}:{v!r}")
        elif isinstance(v, (tuple, list, frozenset, set)):
            items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v
            self.add(f"{type(v).__name__}[{len(items)}]")
            for i, x in enumerate(items):
                self.value(x, f"{where}[{i}]")
        elif isinstance(v, dict):
            self.add(f"dict[{len(v)}]")
            for k in sorted(v, key=repr):
                self.value(k, where)
                self.value(v[k], f"{where}[{k!r}]")
        elif isinstance(v, (staticmethod, classmethod)):
            self.value(v.__func__, where)
        elif isinstance(v, property):
            for f in (v.fget, v.fset, v.fdel):
                self.value(f, where)
        elif isinstance(v, types.FunctionType):
            self.function(v, where)
        elif isinstance(v, types.CodeType):
            self.code(v, where)
        elif isinstance(v, types.ModuleType):
            self.add(f"module {v.__name__}")
        elif isinstance(v, type):
            self.klass(v)
        elif isinstance(v, types.BuiltinFunctionType):
            self.add(f"builtin {getattr(v, '__module__', '')}.{v.__qualname__}")
        elif self.unknown is None:
            self.unknown = f"{where} ({type(v).__name__})"

    def klass(self, v: type):
        """A class: its name, and (once; not for classes written in C, such as
        ``object`` or ``int``) every attribute it defines. A class built by ``exec`` also
        says its module is ``builtins``, so the test is CPython's heap-type flag."""
        self.add(f"type {v.__qualname__}")
        heap_type = bool(v.__flags__ & (1 << 9))
        if not heap_type or id(v) in self.seen:
            return
        self.seen.add(id(v))
        for name in sorted(v.__dict__):
            if name not in ("__dict__", "__weakref__", "__module__", "__doc__", "__qualname__"):
                self.value(v.__dict__[name], f"{v.__name__}.{name}")

    def function(self, f, where: str):
        if id(f) in self.seen:
            return
        self.seen.add(id(f))
        self.code(f.__code__, where)
        self.value(f.__defaults__, f"{where} defaults")
        self.value(f.__kwdefaults__, f"{where} keyword defaults")
        for cell in f.__closure__ or ():
            try:
                self.value(cell.cell_contents, f"{where} closure")
            except ValueError:  # an empty cell
                self.add("empty cell")
        for name in _global_names(f.__code__):
            if name in f.__globals__:
                self.add(f"global {name}")
                self.value(f.__globals__[name], f"{where} global {name}")

    def code(self, c, where: str):
        self.add(f"code {c.co_name}")
        self.digest.update(c.co_code)
        self.add(repr((c.co_names, c.co_varnames, c.co_freevars, c.co_cellvars)))
        for k in c.co_consts:
            if isinstance(k, types.CodeType):
                self.code(k, where)
            else:
                self.value(k, f"{where} constant")


def _global_names(c) -> list:
    """Names a code object and the code nested in it may look up as globals."""
    names = list(c.co_names)
    for k in c.co_consts:
        if isinstance(k, types.CodeType):
            names.extend(_global_names(k))
    return sorted(set(names))


class _progress:
    """The callable the native sweep reports ``(done, total)`` to: the user's, a tqdm
    bar (closed on exit), or ``None``."""

    def __init__(self, progress):
        self.progress = progress
        self.bar = None

    def __enter__(self):
        if callable(self.progress):
            return self.progress
        if self.progress is not True:
            return None
        try:
            from tqdm.auto import tqdm
        except ImportError:
            return None

        def report(done: int, total: int):
            if self.bar is None:
                self.bar = tqdm(total=total, unit="run", desc="sweep")
            self.bar.update(done - self.bar.n)

        return report

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.close()
        return False


class _output_dir:
    """``out`` if given (created), else a temporary directory removed on exit."""

    def __init__(self, out):
        self.out = out
        self.tmp = None

    def __enter__(self) -> str:
        if self.out is not None:
            Path(self.out).mkdir(parents=True, exist_ok=True)
            return os.fspath(self.out)
        self.tmp = tempfile.mkdtemp(prefix="cmtlab-")
        return self.tmp

    def __exit__(self, *exc) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
