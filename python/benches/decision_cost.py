"""CPU cost of a scheduler written in Python, per decision.

Runs the demo scenario (three wireless paths, 120 s) with the built-in round-robin and
with its Python port, in one process, and reports the extra CPU time per call into
Python (select, begin and on_sent each count as a call) and per chunk sent. CPU time
(`time.process_time`), best of `--repeat` runs each, so the figure holds on a busy
machine.

    python python/benches/decision_cost.py [--repeat 5] [--duration 120s]
"""

import argparse
import sys
import time
from pathlib import Path

import cmtlab

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from conftest import DEMO, PyRoundRobin  # noqa: E402


class Counting(PyRoundRobin):
    calls = 0
    sent = 0

    def begin(self, paths):
        Counting.calls += 1
        super().begin(paths)

    def select(self, paths):
        Counting.calls += 1
        return super().select(paths)

    def on_sent(self, path, tsn, nbytes):
        Counting.calls += 1
        Counting.sent += 1
        super().on_sent(path, tsn, nbytes)


def cpu(scheduler: str, duration: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.process_time()
        cmtlab.run(DEMO, set={"duration": duration, "association.scheduler": scheduler})
        best = min(best, time.process_time() - t)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--duration", default="120s")
    a = ap.parse_args()
    cmtlab.register_scheduler("py-round-robin", PyRoundRobin, replace=True)
    cmtlab.register_scheduler("py-counting", Counting, replace=True)
    cmtlab.run(DEMO, set={"duration": a.duration, "association.scheduler": "py-counting"})
    calls, sent = Counting.calls, Counting.sent
    builtin = cpu("round-robin", a.duration, a.repeat)
    python = cpu("py-round-robin", a.duration, a.repeat)
    extra = python - builtin
    print(f"demo scenario, {a.duration}, best of {a.repeat} (CPU time)")
    print(f"  built-in round-robin   {builtin * 1e3:9.1f} ms")
    print(f"  Python round-robin     {python * 1e3:9.1f} ms  ({python / builtin:.1f}x)")
    print(f"  calls into Python      {calls:9d}  ({sent} chunks sent)")
    print(f"  extra CPU per call     {extra / calls * 1e6:9.2f} us")
    print(f"  extra CPU per chunk    {extra / sent * 1e6:9.2f} us")


if __name__ == "__main__":
    main()
