"""Results of runs and sweeps as pandas DataFrames, read from cmtlab's output folders
(``cmtlab run --out DIR``, ``cmtlab sweep --out DIR``, ``cmtlab reproduce``) or from
what :func:`cmtlab.run` and :func:`cmtlab.sweep` just wrote. The columns are those of
the CSV files (``docs/metrics.md``)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import pandas as pd

from ._native import CmtlabError


@dataclass
class RunResult:
    """One simulation run."""

    #: ``summary.json`` as a dict (goodput, bounds, reordering, per-path totals, ...).
    summary: dict
    #: ``timeseries.csv``: one row per time bin (goodput, throughput, O3-TSN, rbuf...).
    timeseries: pd.DataFrame
    #: ``paths.csv``: one row per time bin and path (goodput, throughput, cwnd).
    paths_timeseries: pd.DataFrame
    #: Per-path totals of the summary (sent, lost, retransmitted, goodput...).
    path_table: pd.DataFrame
    #: The per-packet trace (``trace.csv``), when the run recorded one.
    trace: Optional[pd.DataFrame] = None
    #: Where the outputs were read from (removed again for a temporary run).
    dir: Optional[str] = None

    def __repr__(self) -> str:
        s = self.summary
        return (
            f"RunResult(scenario={s.get('scenario')!r}, seed={s.get('seed')}, "
            f"scheduler={s.get('scheduler')!r}, goodput_mbps={s.get('goodput_mbps'):.4g})"
        )


@dataclass
class SweepResult:
    """A sweep: every run's metrics, the aggregate and the comparisons."""

    #: ``results.csv``: one row per run (grid point, seed, every metric).
    results: pd.DataFrame
    #: ``aggregate.csv``: per grid point and metric, n, mean, sd and the CI.
    aggregate: pd.DataFrame
    #: ``comparisons.csv`` (advantage / impact degree against a baseline), if any.
    comparisons: Optional[pd.DataFrame]
    #: The sweep's plan (``plan.json``): axes, seeds, runs, build.
    plan: dict
    #: ``report.md``.
    report: str
    #: Every run's full summary (``runs.jsonl``), in run order.
    runs: list = field(default_factory=list)
    #: Where the outputs were read from.
    dir: Optional[str] = None

    def __repr__(self) -> str:
        return (
            f"SweepResult(name={self.plan.get('name')!r}, runs={len(self.results)}, "
            f"metrics={len(self.aggregate['metric'].unique()) if len(self.aggregate) else 0})"
        )


_TRACE_INTS = ("path", "tsn", "bytes", "cwnd")


def load(out_dir: Union[str, "os.PathLike[str]"]) -> Union[RunResult, SweepResult]:
    """Reads an existing output folder: a sweep's (``plan.json``) or a run's
    (``summary.json``)."""
    d = Path(out_dir)
    if (d / "plan.json").exists():
        return _load_sweep(d)
    if (d / "summary.json").exists():
        return _load_run(d)
    raise CmtlabError(
        f"{d}: neither a sweep output (plan.json) nor a run output (summary.json)"
    )


def _csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path)
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise CmtlabError(f"{path}: cannot read: {e}") from None


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise CmtlabError(f"{path}: cannot read: {e}") from None


def _load_run(d: Path) -> RunResult:
    summary = _json(d / "summary.json")
    trace = None
    if (d / "trace.csv").exists():
        # Rows without a TSN, path or size (SACKs, timeouts) leave gaps: keep the
        # integer columns integers (nullable) rather than floats.
        trace = _csv(d / "trace.csv")
        for col in _TRACE_INTS:
            trace[col] = trace[col].astype("Int64")
    elif (d / "trace.parquet").exists():
        trace = pd.read_parquet(d / "trace.parquet")
    return RunResult(
        summary=summary,
        timeseries=_csv(d / "timeseries.csv"),
        paths_timeseries=_csv(d / "paths.csv"),
        path_table=pd.DataFrame(summary.get("paths", [])),
        trace=trace,
        dir=str(d),
    )


def _load_sweep(d: Path) -> SweepResult:
    for needed in ("results.csv", "aggregate.csv"):
        if not (d / needed).exists():
            raise CmtlabError(
                f"{d}: the sweep has no {needed} yet (not all runs are done; "
                "finish them or merge the shards first)"
            )
    runs = []
    if (d / "runs.jsonl").exists():
        for n, line in enumerate((d / "runs.jsonl").read_text().splitlines(), 1):
            try:
                runs.append(json.loads(line))
            except ValueError as e:
                raise CmtlabError(f"{d / 'runs.jsonl'}: line {n}: {e}") from None
    comparisons = _csv(d / "comparisons.csv") if (d / "comparisons.csv").exists() else None
    return SweepResult(
        results=_csv(d / "results.csv"),
        aggregate=_csv(d / "aggregate.csv"),
        comparisons=comparisons,
        plan=_json(d / "plan.json"),
        report=(d / "report.md").read_text() if (d / "report.md").exists() else "",
        runs=runs,
        dir=str(d),
    )
