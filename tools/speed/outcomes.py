#!/usr/bin/env python3
"""Outcome fingerprints of many scenario variants, to show that speed work changed none.

The golden test (crates/cmt-lab/tests/golden.rs) pins 72 summaries; this tool widens the
net for a change that must not alter any outcome: every runnable scenario of
`scenarios/`, plus a window-bound two-path case (1 MB and 16 MB receive windows) and a
four-path lossy ns-2-mode case, each under several algorithm settings and seeds, run by
two builds of `cmtlab`. For each variant it hashes the summary (without `wall_s`,
`events`, `build`, `inputs`) and, with `--trace`, the per-packet trace (every send,
drop, arrival, delivery, SACK and timeout), so a difference anywhere in a run shows.

    tools/speed/outcomes.py run BINARY OUT.jsonl [--trace] [--jobs N] [--duration S]
    tools/speed/outcomes.py diff A.jsonl B.jsonl
    tools/speed/outcomes.py count

`diff` prints the variants whose fingerprints differ and exits 1 when any does; `count`
prints how many variants `run` would run (the documentation's figure is checked against
it by `crates/cmtlab/tests/doc_counts.rs`).
Typical use: build the commit before the change, copy its `target/release/cmtlab`
aside, build the change, run both, diff.
"""

import argparse
import concurrent.futures as cf
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

VOLATILE = ("wall_s", "events", "build", "inputs")

SETTINGS = [
    [],
    ["association.scheduler=minrtt"],
    ["association.scheduler=blest"],
    ["association.scheduler=japs"],
    ["association.scheduler=redundant"],
    ["association.rtx=rtx-ssthresh"],
    ["association.rtx=rtx-asap"],
    ["association.rtx=rtx-csi"],
    ["association.rtx=rtx-cl"],
    ["association.scheduler=db-cmt", "association.cc=db-cmt"],
    ["association.scheduler=cmt-qa", "association.cc=cmt-qa"],
    ["association.preset=cmt-rev"],
    ["association.preset=mptcp-rec"],
    ["association.cc=lia"],
    ["receiver.rbuf=16KB"],
    ["association.compat=ns2"],
    ["association.pf=false"],
]

SEEDS = [1, 7]

# The per-packet bench's topology, where the receive window binds.
WINDOW_BINDS = ROOT / "crates/cmt-sim/benches/window-binds.toml"


def four_lossy() -> str:
    s = 'name = "four-lossy"\nseed = 1\nduration = "60s"\n'
    s += '[association]\ncompat = "ns2"\n[receiver]\nrbuf = 131072\n'
    for i, d in enumerate([10, 20, 40, 80]):
        s += (f'[[links]]\nname = "p{i}"\nrate = "2Mbps"\ndelay = "{d}ms"\n'
              f'queue = 49\nloss = 0.01\nloss_direction = "forward"\n')
    for i in range(4):
        s += f'[[paths]]\nname = "p{i}"\nlinks = ["p{i}"]\n'
    return s


def bases(tmp: Path) -> list[tuple[Path, list[str]]]:
    """Every scenario file `cmtlab run` accepts (sweeps and studies are not scenarios),
    the per-packet bench's window-bound case at 1 MB and 16 MB, and the four-path lossy
    case; each with the settings that make it a base."""
    found = []
    for f in sorted((ROOT / "scenarios").rglob("*.toml")):
        # Sweeps and studies name a base scenario; the bases are found on their own.
        if not re.search(r"^(base|sweeps) =", f.read_text(), re.M):
            found.append((f, []))
    for rbuf in ["1MB", "16MB"]:
        found.append((WINDOW_BINDS, [f"receiver.rbuf={rbuf}", "duration=60s"]))
    lossy = tmp / "four-lossy.toml"
    lossy.write_text(four_lossy())
    found.append((lossy, []))
    return found


def fingerprint(binary: str, scenario: Path, sets: list[str], trace: bool, tmp: Path) -> dict:
    name = scenario.relative_to(ROOT) if scenario.is_relative_to(ROOT) else scenario.name
    key = f"{name} {' '.join(sets)}"
    with tempfile.TemporaryDirectory(dir=tmp) as d:
        out = Path(d)
        cmd = [binary, "run", str(scenario), "--json", str(out / "s.json")]
        if trace:
            cmd += ["--trace", str(out / "t.csv")]
        for s in sets:
            cmd += ["--set", s]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired:
            return {"case": key, "error": "timed out after 600 s"}
        if r.returncode != 0:
            return {"case": key, "error": (r.stderr.strip().splitlines() or ["?"])[-1]}
        summary = json.loads((out / "s.json").read_text())
        for k in VOLATILE:
            summary.pop(k, None)
        rec = {
            "case": key,
            "summary": hashlib.sha256(json.dumps(summary, sort_keys=True).encode())
            .hexdigest()[:16],
            "goodput_mbps": summary.get("goodput_mbps"),
        }
        if trace:
            rec["trace"] = hashlib.sha256((out / "t.csv").read_bytes()).hexdigest()[:16]
        return rec


def variants(tmp: Path, duration) -> list[tuple[Path, list[str]]]:
    """Every variant: a base scenario with its settings, an algorithm setting, a seed."""
    jobs = []
    for base, base_sets in bases(tmp):
        for sets in SETTINGS:
            for seed in SEEDS:
                extra = base_sets + [f"seed={seed}"] + sets
                if duration:
                    extra.append(f"duration={duration}s")
                jobs.append((base, extra))
    return jobs


def run(args) -> int:
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        jobs = variants(tmp, args.duration)
        with cf.ThreadPoolExecutor(max_workers=args.jobs) as pool:
            recs = list(pool.map(
                lambda j: fingerprint(args.binary, j[0], j[1], args.trace, tmp), jobs))
    with open(args.out, "w") as f:
        for r in recs:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    errors = sum("error" in r for r in recs)
    print(f"{len(recs)} variants ({errors} refused by the scenario) -> {args.out}")
    return 0


def diff(args) -> int:
    def load(p):
        return {r["case"]: r for r in map(json.loads, open(p))}
    a, b = load(args.a), load(args.b)
    bad = 0
    for case in sorted(set(a) | set(b)):
        ra, rb = a.get(case), b.get(case)
        if ra != rb:
            bad += 1
            print(f"DIFFERS {case}\n  {ra}\n  {rb}")
    print(f"{len(set(a) | set(b))} variants, {bad} differ")
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("binary")
    r.add_argument("out")
    r.add_argument("--trace", action="store_true", help="also hash the per-packet trace")
    r.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    r.add_argument("--duration", type=float, help="override every scenario's duration (s)")
    d = sub.add_parser("diff")
    d.add_argument("a")
    d.add_argument("b")
    sub.add_parser("count")
    args = ap.parse_args()
    if args.cmd == "count":
        with tempfile.TemporaryDirectory() as t:
            print(len(variants(Path(t), None)))
        return 0
    return run(args) if args.cmd == "run" else diff(args)


if __name__ == "__main__":
    sys.exit(main())
