"""Schedulers written in Python: registration, byte-identical equivalence of a Python
round-robin with the built-in one, parameters, and failures as Python exceptions."""

import pytest

import cmtlab
from conftest import DEMO, PyRoundRobin

SHORT = {"duration": "10s"}

cmtlab.register_scheduler("py-round-robin", PyRoundRobin, replace=True)


def test_python_round_robin_is_byte_identical_to_the_built_in_one(tmp_path):
    outs = {}
    for name in ("round-robin", "py-round-robin"):
        outs[name] = tmp_path / name
        cmtlab.run(
            DEMO,
            set={**SHORT, "association.scheduler": name},
            out=outs[name],
            trace=True,
        )
    a, b = outs["round-robin"], outs["py-round-robin"]
    # Every packet sent, retransmitted, dropped, delivered: the same, byte for byte.
    for f in ("trace.csv", "timeseries.csv", "paths.csv"):
        assert (a / f).read_bytes() == (b / f).read_bytes(), f
    ra, rb = cmtlab.load(a).summary, cmtlab.load(b).summary
    assert ra["scheduler"] == "round-robin" and rb["scheduler"] == "py-round-robin"
    for k in ra:
        if k not in ("scheduler", "wall_s", "events", "build", "inputs"):
            assert ra[k] == rb[k], k
    # The registration is recorded with the results.
    assert "scheduler:py-round-robin" in rb["build"]["extensions"]


class MinFlight:
    """The path with room that has the least in flight, ties to the lower index;
    `favour` (a scenario parameter) wins ties instead."""

    def __init__(self, favour=None):
        self.favour = favour
        self.sent = {}

    def select(self, paths):
        ok = [p for p in paths if p.can_send]
        if not ok:
            return None
        if self.favour is not None and paths[self.favour].can_send:
            best = min(p.flight for p in ok)
            if paths[self.favour].flight == best:
                return self.favour
        return min(ok, key=lambda p: (p.flight, p.id)).id

    def on_sent(self, path, tsn, nbytes):
        self.sent[path] = self.sent.get(path, 0) + 1


def test_a_prototype_scheduler_runs_with_its_parameters():
    cmtlab.register_scheduler("min-flight", MinFlight, replace=True)
    r = cmtlab.run(
        DEMO,
        set={
            **SHORT,
            "association.scheduler": "min-flight",
            "association.scheduler_params": {"favour": 2},
        },
    )
    assert r.summary["scheduler"] == "min-flight"
    assert r.summary["goodput_mbps"] > 0
    # A parameter the class does not take names the class's complaint.
    with pytest.raises(cmtlab.CmtlabError) as e:
        cmtlab.run(
            DEMO,
            set={
                **SHORT,
                "association.scheduler": "min-flight",
                "association.scheduler_params": {"speed": 3},
            },
        )
    assert "scheduler `min-flight`: TypeError:" in str(e.value)
    assert "speed" in str(e.value)


def test_paths_carry_the_moment():
    seen = []

    class Spy(PyRoundRobin):
        def select(self, paths):
            if len(seen) < 200:
                seen.append((paths.now, paths.peer_rwnd, len(paths), [p.state for p in paths], paths[-1].id))
            return super().select(paths)

    cmtlab.register_scheduler("spy", Spy, replace=True)
    cmtlab.run(DEMO, set={"duration": "2s", "association.scheduler": "spy"})
    assert len(seen) == 200
    times = [s[0] for s in seen]
    assert times == sorted(times) and times[-1] > 0
    assert all(s[2] == 3 and s[4] == 2 for s in seen)
    assert all(0 <= s[1] <= 65536 for s in seen)
    assert {st for s in seen for st in s[3]} <= {"active", "potentially-failed", "inactive"}


def test_an_exception_in_a_hook_is_raised_to_the_caller():
    class Boom(PyRoundRobin):
        def __init__(self):
            super().__init__()
            self.n = 0

        def on_sent(self, path, tsn, nbytes):
            super().on_sent(path, tsn, nbytes)
            self.n += 1
            if self.n == 50:
                raise ZeroDivisionError("fifty chunks is enough")

    cmtlab.register_scheduler("boom", Boom, replace=True)
    with pytest.raises(ZeroDivisionError, match="fifty chunks is enough"):
        cmtlab.run(DEMO, set={**SHORT, "association.scheduler": "boom"})
    # The next run on this thread is not affected.
    assert cmtlab.run(DEMO, set={"duration": "1s"}).summary["goodput_mbps"] > 0


def test_a_choice_that_is_not_a_path_is_a_value_error():
    class Wrong:
        def select(self, paths):
            return len(paths)

    cmtlab.register_scheduler("wrong", Wrong, replace=True)
    with pytest.raises(ValueError, match=r"select returned 3, expected a path index from 0 to 2 or None"):
        cmtlab.run(DEMO, set={**SHORT, "association.scheduler": "wrong"})


def test_registration_refuses_taken_built_in_and_malformed_names():
    class Any_:
        def select(self, paths):
            return None

    cmtlab.register_scheduler("taken-once", Any_)
    with pytest.raises(cmtlab.CmtlabError, match="scheduler `taken-once` is already registered"):
        cmtlab.register_scheduler("taken-once", Any_)
    cmtlab.register_scheduler("taken-once", Any_, replace=True)
    with pytest.raises(cmtlab.CmtlabError, match="built in and cannot be replaced"):
        cmtlab.register_scheduler("round-robin", Any_, replace=True)
    with pytest.raises(cmtlab.CmtlabError, match="use 1-64 characters"):
        cmtlab.register_scheduler("Bad Name", Any_)
    class NoSelect:
        pass

    cmtlab.register_scheduler("no-select", NoSelect, replace=True)
    with pytest.raises(cmtlab.CmtlabError, match="has no select"):
        cmtlab.run(DEMO, set={**SHORT, "association.scheduler": "no-select"})
    names = [n for n, _, mine in cmtlab.algorithms()["scheduler"] if mine]
    assert "taken-once" in names and "round-robin" not in names


def test_the_build_hash_follows_the_class_source():
    before = cmtlab.build_info()["source"]

    class Edited(PyRoundRobin):
        pass

    cmtlab.register_scheduler("py-round-robin", Edited, replace=True)
    after = cmtlab.build_info()["source"]
    cmtlab.register_scheduler("py-round-robin", PyRoundRobin, replace=True)
    assert before != after
    assert cmtlab.build_info()["source"] == before


STEERED = """
class Steered:
    \"\"\"Sends every new chunk on path {path} while it has room, else the first with room.\"\"\"

    def select(self, paths):
        if paths[{path}].can_send:
            return {path}
        return next((p.id for p in paths if p.can_send), None)
"""


def _steered(path: int) -> type:
    """The class built from text, as a notebook cell or a console defines it: no
    source file for `inspect` to read."""
    scope = {}
    exec(STEERED.format(path=path), scope)
    return scope["Steered"]


def test_a_class_without_a_source_file_redefined_gets_new_results_in_the_same_out(tmp_path):
    spec = {
        "name": "steered",
        "base": str(DEMO),
        "seeds": 2,
        "metrics": ["goodput_mbps", "paths.path3-80211.sent_packets"],
        "set": {"duration": "5s", "association.scheduler": "steered"},
        "axes": [{"key": "receiver.rbuf", "values": ["64KB"]}],
    }
    out = tmp_path / "out"
    cmtlab.register_scheduler("steered", _steered(0), replace=True)
    first = cmtlab.sweep(spec, jobs=1, out=out).results
    # The same text again: the same fingerprint, the finished runs are reused.
    cmtlab.register_scheduler("steered", _steered(0), replace=True)
    again = cmtlab.sweep(spec, jobs=1, out=out).results
    assert list(again["run_id"]) == list(first["run_id"])
    # Other behaviour under the same name: new runs, new numbers (path 3, the slow
    # 2 Mbit/s one, now gets every chunk it has room for).
    cmtlab.register_scheduler("steered", _steered(2), replace=True)
    second = cmtlab.sweep(spec, jobs=1, out=out).results
    assert set(second["run_id"]).isdisjoint(first["run_id"])
    col = "paths.path3-80211.sent_packets"
    assert second[col].sum() > first[col].sum(), (first[col], second[col])


def test_a_class_holding_what_cannot_be_fingerprinted_is_never_reused():
    class Holder:
        lock = __import__("threading").Lock()

        def select(self, paths):
            return next((p.id for p in paths if p.can_send), None)

    with pytest.warns(UserWarning, match=r"cannot fingerprint Holder.lock"):
        cmtlab.register_scheduler("holder", Holder, replace=True)
    before = cmtlab.build_info()["source"]
    with pytest.warns(UserWarning):
        cmtlab.register_scheduler("holder", Holder, replace=True)
    assert cmtlab.build_info()["source"] != before



def test_the_package_says_its_version():
    assert cmtlab.__version__ == cmtlab.build_info()["version"]


HELPED = """
class Rule:
    PATH = {path}

class Helped:
    def select(self, paths):
        return Rule.PATH if paths[Rule.PATH].can_send else None
"""


def test_a_helper_class_the_scheduler_uses_is_part_of_its_fingerprint():
    # Both classes built by exec (their module reads as `builtins`): a change in the
    # helper alone must change the build hash.
    hashes = []
    for path in (0, 1, 0):
        scope = {}
        exec(HELPED.format(path=path), scope)
        cmtlab.register_scheduler("helped", scope["Helped"], replace=True)
        hashes.append(cmtlab.build_info()["source"])
    assert hashes[0] != hashes[1] and hashes[0] == hashes[2]
