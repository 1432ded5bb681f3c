"""`cmtlab.run` and `cmtlab.load`: scenarios from files, text and dicts; overrides,
seeds and errors; outputs as DataFrames equal to what the command line writes."""

import json
import tomllib

import pandas as pd
import pytest

import cmtlab
from conftest import DEMO, run_cli

SHORT = {"duration": "10s"}


def outcome(summary: dict) -> dict:
    """A summary without what is cost, not outcome (wall time, event count) and
    without provenance (the build, and `inputs`: a hash of the scenario text and the
    overrides as written)."""
    return {k: v for k, v in summary.items() if k not in ("wall_s", "events", "build", "inputs")}


def test_a_file_toml_text_and_a_dict_give_the_same_run():
    by_file = cmtlab.run(DEMO, set=SHORT)
    by_text = cmtlab.run(DEMO.read_text(), set=SHORT)
    as_dict = tomllib.loads(DEMO.read_text())
    by_dict = cmtlab.run(as_dict, set=SHORT)
    # The scenario name comes from the file when it sets none; the demo sets one.
    assert outcome(by_file.summary) == outcome(by_text.summary) == outcome(by_dict.summary)
    pd.testing.assert_frame_equal(by_file.timeseries, by_dict.timeseries)


def test_seed_and_set_reach_the_scenario():
    a = cmtlab.run(DEMO, set={**SHORT, "receiver.rbuf": "32KB"}, seed=7)
    assert a.summary["seed"] == 7
    assert a.summary["rbuf"] == 32 * 1024
    b = cmtlab.run(DEMO, set=SHORT, seed=8)
    assert a.summary["goodput_mbps"] != b.summary["goodput_mbps"]
    # Same scenario and seed: the same outcome.
    assert outcome(cmtlab.run(DEMO, set={**SHORT, "receiver.rbuf": "32KB"}, seed=7).summary) == outcome(a.summary)


def test_tables_hold_the_run():
    r = cmtlab.run(DEMO, set=SHORT, trace=True)
    s = r.summary
    # 0.5 s bins over 10 s.
    assert len(r.timeseries) == 20
    assert list(r.path_table["name"]) == [p["name"] for p in s["paths"]]
    assert len(r.paths_timeseries) == 20 * len(s["paths"])
    # Delivered bytes over the run add up to the summary's goodput.
    mbit = (r.timeseries["goodput_mbps"] * 0.5).sum()
    assert mbit == pytest.approx(s["goodput_mbps"] * 10, rel=1e-6)
    # The trace counts what the summary counts: per path, sends + retransmissions.
    sent = r.trace[(r.trace["side"] == "sender") & r.trace["kind"].isin(["send", "retransmit"])]
    per_path = sent.groupby("path").size()
    for i, p in enumerate(s["paths"]):
        assert per_path.get(i, 0) == p["sent_packets"]
    assert str(r.trace["tsn"].dtype) == "Int64"


def test_outputs_equal_the_command_lines(tmp_path):
    cli_out = tmp_path / "cli"
    done = run_cli("run", str(DEMO), "--set", "duration=10s", "--out", str(cli_out))
    assert done.returncode == 0, done.stderr
    py_out = tmp_path / "py"
    cmtlab.run(DEMO, set=SHORT, out=py_out)
    for f in ("timeseries.csv", "paths.csv"):
        assert (py_out / f).read_bytes() == (cli_out / f).read_bytes(), f
    loaded = cmtlab.load(cli_out)
    assert outcome(loaded.summary) == outcome(json.loads((py_out / "summary.json").read_text()))


@pytest.mark.parametrize(
    "set_, message",
    [
        ({"receiver.rbuf": "lots"}, 'field `receiver.rbuf`: invalid size "lots"'),
        ({"association.scheduler": "nope"}, "unknown scheduler `nope` (known: round-robin,"),
        ({"links.nolink.rate": "1Mbps"}, "no element named `nolink`"),
    ],
)
def test_bad_input_is_a_cmtlab_error_with_the_one_line_message(set_, message):
    with pytest.raises(cmtlab.CmtlabError) as e:
        cmtlab.run(DEMO, set=set_)
    assert message in str(e.value)
    assert "\n" not in str(e.value)


def test_a_missing_file_and_a_wrong_type_are_errors(tmp_path):
    with pytest.raises(cmtlab.CmtlabError, match="cannot read file"):
        cmtlab.run(tmp_path / "absent.toml")
    with pytest.raises(TypeError, match="expected a file path, TOML text or a dict"):
        cmtlab.run(42)
    with pytest.raises(TypeError, match="`duration`: cannot put a object"):
        cmtlab.run(DEMO, set={"duration": object()})
    with pytest.raises(cmtlab.CmtlabError, match="neither a sweep output"):
        cmtlab.load(tmp_path)


def test_cost_and_energy_reach_the_summary_and_the_path_table():
    # The demo's first path as a metered LTE interface, its second as WiFi.
    r = cmtlab.run(
        DEMO,
        set={
            **SHORT,
            "paths.path1-80211b.radio": "lte",
            "paths.path1-80211b.price_per_mb": 0.5,
            "paths.path2-80216.radio": "wifi",
        },
    )
    s, t = r.summary, r.path_table
    lte = t[t["name"] == "path1-80211b"].iloc[0]
    assert lte["cost"] == pytest.approx(0.5 * lte["sent_bytes"] / 1e6)
    assert s["cost"] == pytest.approx(lte["cost"])
    assert s["energy_j"] == pytest.approx(t["energy_j"].sum())
    assert s["energy_j_per_mb"] == pytest.approx(s["energy_j"] / (s["delivered_bytes"] / 1e6))
    # Every byte sent is a first transmission, a retransmission or a copy.
    assert (t["sent_bytes"] >= t["retransmitted_bytes"] + t["copy_bytes"]).all()
    # Without radios or prices the keys are absent.
    plain = cmtlab.run(DEMO, set=SHORT).summary
    assert "energy_j" not in plain and "cost" not in plain
