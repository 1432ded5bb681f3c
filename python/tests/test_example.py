"""The example that reproduces a study figure from Python: it runs, draws the figure,
and its numbers are those of single runs of the study's scenario at the same point."""

import importlib.util
import tomllib

import pandas as pd
import pytest

import cmtlab
from conftest import ROOT

SCRIPT = ROOT / "examples" / "python" / "rtx_csi_fig11.py"


def test_the_figure_script_runs_and_its_numbers_are_the_studys_runs(tmp_path):
    pytest.importorskip("matplotlib")
    spec = importlib.util.spec_from_file_location("fig11", SCRIPT)
    fig11 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fig11)
    assert fig11.main(["--seeds", "1", "--duration", "5s", "--jobs", "2", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "rtx_csi_fig11.png").stat().st_size > 10_000
    table = pd.read_csv(tmp_path / "rtx_csi_fig11.csv", index_col=0)
    assert list(table.index) == [16384, 32768, 65536, 131072, 262144]
    assert sorted(table.columns) == ["rtx-csi", "rtx-cwnd", "rtx-ssthresh"]
    # One seed: each bar is one run of the study's case-1 scenario at that point.
    case1 = ROOT / "scenarios" / "studies" / "rtx-csi" / "case1.toml"
    base = case1.parent / "dual-dumbbell.toml"
    with open(case1, "rb") as f:
        fixed = tomllib.load(f)["set"]  # what the sweep sets on every run
    for rtx, rbuf in [("rtx-csi", "64KB"), ("rtx-ssthresh", "16KB")]:
        r = cmtlab.run(
            base,
            seed=1,
            set={
                **fixed,
                "links.s-if1.loss": 0.05,
                "association.rtx": rtx,
                "receiver.rbuf": rbuf,
                "duration": "5s",
            },
        )
        value = int(rbuf[:-2]) * 1024
        assert table.loc[value, rtx] == pytest.approx(r.summary["goodput_mbps"], rel=1e-12)
