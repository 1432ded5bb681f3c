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
import inspect
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from . import _native
from ._native import CmtlabError, Paths, PathView
from .results import RunResult, SweepResult, load

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
) -> SweepResult:
    """Runs a sweep (a grid of variations times seeds) and returns its results.

    ``spec`` is a sweep file path, TOML text or a dict (its ``base`` scenario is then
    looked up from the current directory). ``jobs`` runs that many simulations at once
    (default: every core). ``seeds`` replaces the sweep's seeds (a count or a list) and
    ``set`` adds overrides for every run, e.g. a shorter ``duration``. With ``out`` the
    results stay there (and a later call resumes: finished runs are not run again).
    """
    jobs = jobs or os.cpu_count() or 1
    with _output_dir(out) as dir:
        _native.sweep(_scenario_arg(spec), dir, int(jobs), seeds, dict(set or {}))
        return load(dir)


def register_scheduler(
    name: str, cls: type, summary: str = "", replace: bool = False
) -> type:
    """Registers a Python class as scheduler ``name`` for scenario files and sweeps.

    The class needs ``select(self, paths) -> int | None``: the index of the path for
    the next new chunk, or ``None`` to send no new data now. ``paths`` is a sequence
    of :class:`PathView` (``id``, ``state``, ``cwnd``, ``ssthresh``, ``flight``,
    ``srtt``, ``rttvar``, ``min_rtt``, ``rto``, ``timeouts``, ``loss_rate``,
    ``capacity``, ``advertised_rate``, ``can_send``; times in seconds) with the
    moment's ``now``, ``peer_rwnd``, ``chunk_len`` and ``queued_bytes``. Optional
    hooks: ``begin(self, paths)`` at each transmission opportunity,
    ``on_sent(self, path, tsn, nbytes)``, ``on_rtt_sample(self, path, rtt_s)``.
    Every association gets its own instance, ``cls(**scheduler_params)``.

    ``replace=True`` replaces an earlier registration of ``name`` (a notebook cell
    run again); built-in names can never be replaced. The class's source code is
    part of the results' build hash, so a sweep never reuses results of an edited
    scheduler.
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
    """A hash of the class's source (its qualified name when the source is not
    available, e.g. a class typed into a console)."""
    try:
        text = inspect.getsource(cls)
    except (OSError, TypeError):
        text = f"{cls.__module__}.{cls.__qualname__}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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
