"""`cmtlab.sweep`: the aggregate equals the command line's on the same sweep; sweeps
from dicts; parallel sweeps with a Python scheduler (the GIL is released)."""

import os
import re
import signal
import threading

import pandas as pd
import pytest

import cmtlab
from conftest import ROOT, PyRoundRobin, run_cli

RBUF = ROOT / "scenarios" / "studies" / "demo" / "rbuf.toml"


def test_the_aggregate_equals_the_command_lines(tmp_path):
    cli_out = tmp_path / "cli"
    # The command line has no --seeds/--set for sweeps: give both the same file.
    small = tmp_path / "rbuf-small.toml"
    text = re.sub(r"(?m)^seeds = .*$", "seeds = 3", RBUF.read_text()).replace('duration = "60s"', 'duration = "10s"')
    text = text.replace('base = "../../demo.toml"', f'base = "{ROOT / "scenarios" / "demo.toml"}"')
    small.write_text(text)
    done = run_cli("sweep", str(small), "--out", str(cli_out), "--jobs", "2")
    assert done.returncode == 0, done.stderr
    py = cmtlab.sweep(small, jobs=2, out=tmp_path / "py")
    assert (tmp_path / "py" / "aggregate.csv").read_bytes() == (cli_out / "aggregate.csv").read_bytes()
    assert (tmp_path / "py" / "comparisons.csv").read_bytes() == (cli_out / "comparisons.csv").read_bytes()
    cli = cmtlab.load(cli_out)
    pd.testing.assert_frame_equal(py.aggregate, cli.aggregate)
    # Per run, everything but the provenance (run id and build, which differ between
    # the two programs) is the same.
    def outcome(r):
        return r.drop(columns=["run_id"] + [c for c in r.columns if c.startswith("build_")])

    pd.testing.assert_frame_equal(outcome(py.results), outcome(cli.results))
    assert len(py.results) == 9 and len(py.runs) == 9


def test_seeds_and_set_adjust_a_sweep_and_a_dict_is_a_sweep(tmp_path):
    spec = {
        "name": "dict-sweep",
        "base": str(ROOT / "scenarios" / "demo.toml"),
        "seeds": 5,
        "metrics": ["goodput_mbps"],
        "axes": [{"key": "receiver.rbuf", "values": ["32KB", "128KB"]}],
    }
    s = cmtlab.sweep(spec, jobs=2, seeds=[11, 12], set={"duration": "5s"})
    assert s.plan["name"] == "dict-sweep"
    assert sorted(s.results["seed"].unique()) == [11, 12]
    assert len(s.results) == 4
    assert set(s.aggregate["metric"]) == {"goodput_mbps"}
    assert (s.aggregate["n"] == 2).all()
    with pytest.raises(cmtlab.CmtlabError, match=r"axes\[0\] `receiver.rbuf`: give exactly one of"):
        cmtlab.sweep({**spec, "axes": [{"key": "receiver.rbuf"}]}, jobs=1)


def test_a_python_scheduler_in_a_parallel_sweep_matches_the_built_in_one(tmp_path):
    cmtlab.register_scheduler("py-round-robin", PyRoundRobin, replace=True)
    spec = {
        "name": "py-vs-builtin",
        "base": str(ROOT / "scenarios" / "demo.toml"),
        "seeds": 2,
        "metrics": ["goodput_mbps", "fast_retransmits", "timeouts"],
        "set": {"duration": "5s"},
        "axes": [{"key": "association.scheduler", "values": ["round-robin", "py-round-robin"]}],
    }
    # Two worker threads each take the GIL for every Python decision while the
    # calling thread waits: this finishes only because runs release the GIL.
    s = cmtlab.sweep(spec, jobs=2)
    res = s.results.set_index(["seed", "association.scheduler"])
    for seed in (1, 2):
        a, b = res.loc[(seed, "round-robin")], res.loc[(seed, "py-round-robin")]
        for m in spec["metrics"]:
            assert a[m] == b[m], (seed, m)


def _long_sweep(seeds: int) -> dict:
    return {
        "name": "long",
        "base": str(ROOT / "scenarios" / "demo.toml"),
        "seeds": seeds,
        "metrics": ["goodput_mbps"],
        "set": {"duration": "600s"},
        "axes": [{"key": "receiver.rbuf", "values": ["64KB"]}],
    }


def test_progress_is_reported_to_a_callable_up_to_the_total(tmp_path):
    seen = []
    cmtlab.sweep(_long_sweep(6), jobs=2, out=tmp_path / "o", progress=lambda d, t: seen.append((d, t)))
    assert seen, "no progress reported"
    assert seen[-1] == (6, 6)
    assert all(t == 6 for _, t in seen) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    # All done already: nothing to report, no bar, no call.
    again = []
    cmtlab.sweep(_long_sweep(6), jobs=2, out=tmp_path / "o", progress=again.append)
    assert again == []


def test_an_interrupt_stops_a_sweep_and_keeps_the_runs_it_finished(tmp_path):
    # 400 runs of 600 simulated seconds: far longer than the half second before the
    # interrupt. SIGINT is what Ctrl-C and a notebook's "interrupt kernel" send. Python
    # turns it into KeyboardInterrupt only when its parent left SIGINT alone; a test
    # suite started in the background (`cmd &` in a script) inherits it ignored, so the
    # handler a terminal session has is set for the test.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            cmtlab.sweep(_long_sweep(400), jobs=2, out=tmp_path / "o", progress=False)
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
    kept = list((tmp_path / "o" / "runs").glob("*.json"))
    assert 0 < len(kept) < 400, len(kept)
