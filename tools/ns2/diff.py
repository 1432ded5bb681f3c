#!/usr/bin/env python3
"""Differential testing of cmtlab against ns-2.35's SCTP CMT module.

Random (or fixed) cases -- 1 to 4 paths, 0.5-50 Mbit/s, 1-300 ms, 0-10 % loss on the
data direction, receive buffers of 16 KB-4 MB, every retransmission policy, CMT's
algorithms on or off, CMT-PF on or off -- run in both simulators with several seeds
each. For every case the script compares goodput and, per path, the mechanism: DATA
packets sent, lost, retransmitted (by destination), fast retransmissions (by the path the
chunk was lost on), T3 timeouts and cwnd reductions.

    diff.py gen [--cases N] [--seed S] [--wide | --pf-class | --failure]
                                                random cases, one JSON per line; --wide
                                                also draws every knob both simulators
                                                have (MTU, delayed SACKs and their delay,
                                                minRTO, SFR/CUC/DAC one by one, PF's
                                                window, loss on the SACK direction,
                                                3-4 paths with rates to 50:1 down to
                                                24 kbit/s, queues 5-300, rbuf to 8 MB);
                                                --pf-class draws CMT-PF with RTX-SAME or
                                                RTX-LOSSRATE under asymmetric loss (one
                                                path at 3-15 %, the others below 1 %);
                                                --failure has one path fail for good
                                                mid-run, half with SFR/CUC/DAC and PF off
    diff.py run CASES --out DIR [--seeds K]     both simulators, resumable (DIR/<id>.json)
    diff.py rerun DIR --out DIR2                cmtlab again against the ns-2 runs stored
                                                in DIR (to compare builds, or bisect)
    diff.py report DIR                          Markdown summary of a run
    diff.py check CASES [--seeds K]             run and print one JSON verdict per case

Needs `ns` (Debian: apt-get install ns2) and a cmtlab binary (env CMTLAB, default
target/release/cmtlab). cmtlab runs with `association.compat = "ns2"`; ns-2 with its
defaults except what a case sets. ns-2 starts with an INIT handshake, so its runs are
measured over the same length of time from its first DATA packet; runs that hang
(ns-2 sometimes spins forever) are killed after a wall-clock limit and reported, never
averaged.
"""
import argparse
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
POLICIES = ["rtx-asap", "rtx-same", "rtx-ssthresh", "rtx-lossrate", "rtx-cwnd"]  # ns-2 0..4
NS2_SEED_BASE = 1_000_003  # small ns-2 seeds lose the first INIT; use large ones
SLACK_S = 12.0  # simulated time ns-2 may spend on the handshake (INIT RTO 3 s, then 6 s)
DURATION_S = 30
# ns-2.35 keeps stream sequence numbers in 16 bits and sorts its reordering buffer by
# them without wrap-around (`SctpAgent::InsertInStreamBuffer`, `UpdateAllStreams`):
# when SSN 65535 and 0 are held at the same time, ordered delivery stops for good.
# Cases are measured over at most this many chunks' worth of capacity.
SSN_SAFE_CHUNKS = 0.85 * 65536


# ----- cases -----

def log_uniform(rng, lo, hi):
    return math.exp(rng.uniform(math.log(lo), math.log(hi)))


def gen_case(rng, i):
    n = rng.choices([1, 2, 3, 4], weights=[2, 4, 3, 2])[0]
    paths = []
    for _ in range(n):
        paths.append({
            "rate_bps": int(round(log_uniform(rng, 0.5e6, 50e6), -3)),
            "delay_ms": round(log_uniform(rng, 1, 300), 1),
            "loss": 0.0 if rng.random() < 0.25 else round(log_uniform(rng, 0.001, 0.10), 4),
            "queue": rng.choice([10, 20, 50, 100]),
        })
    return {
        "id": f"r{i:03d}",
        "paths": paths,
        "rbuf": int(log_uniform(rng, 16 * 1024, 4 * 1024 * 1024)),
        "rtx": rng.randrange(5),
        "cmt": rng.random() < 0.75,
        "pf": rng.random() < 0.5,
        "duration_s": duration_for(paths),
    }


def gen_case_wide(rng, i):
    n = rng.choices([1, 2, 3, 4], weights=[1, 2, 4, 3])[0]
    top = log_uniform(rng, 1e6, 50e6)
    mtu = rng.choice([1500, 1000, 576])
    paths = []
    for k in range(n):
        rate = top if k == 0 else max(24e3, top / log_uniform(rng, 1, 50))
        paths.append({
            "rate_bps": int(round(rate, -3)),
            "delay_ms": round(log_uniform(rng, 1, 300), 1),
            "loss": 0.0 if rng.random() < 0.25 else round(log_uniform(rng, 0.001, 0.10), 4),
            "queue": int(round(log_uniform(rng, 5, 300))),
        })
    rng.shuffle(paths)
    delack = rng.random() < 0.7
    return {
        "id": f"w{i:03d}",
        "paths": paths,
        "rbuf": int(log_uniform(rng, 16 * 1024, 8 * 1024 * 1024)),
        "rtx": rng.randrange(5),
        "sfr": rng.random() < 0.6, "cuc": rng.random() < 0.6, "dac": rng.random() < 0.6,
        "pf": rng.random() < 0.5, "pf_cwnd": rng.choice([1, 2]),
        "mtu": mtu,
        "delack": delack, "sack_delay_ms": rng.choice([50, 100, 200, 300, 400]) if delack else 200,
        "min_rto_ms": rng.choice([200, 300, 500, 1000]),
        "loss_rev": rng.random() < 0.4,
        "duration_s": duration_for(paths, mtu, rng.choice([60, 90, 120])),
    }


def gen_case_pf(rng, i):
    """CMT-PF with RTX-SAME or RTX-LOSSRATE, one path much lossier than the others:
    the class whose retransmissions go to a potentially-failed path (ns-2's
    `SelectRtxDest` lets these two policies pick one)."""
    n = rng.choice([2, 2, 3, 4])
    paths = []
    for k in range(n):
        paths.append({
            "rate_bps": int(round(log_uniform(rng, 1e6, 20e6), -3)),
            "delay_ms": round(log_uniform(rng, 2, 100), 1),
            "loss": round(log_uniform(rng, 0.03, 0.15), 4) if k == 0
            else round(log_uniform(rng, 0.001, 0.01), 4),
            "queue": rng.choice([10, 20, 50, 100]),
        })
    rng.shuffle(paths)
    return {
        "id": f"p{i:03d}",
        "paths": paths,
        "rbuf": int(log_uniform(rng, 32 * 1024, 512 * 1024)),
        "rtx": rng.choice([1, 3]),
        "cmt": True,
        "pf": True,
        "loss_rev": rng.random() < 0.3,
        "duration_s": duration_for(paths, 1500, rng.choice([60, 120])),
    }


def gen_case_failure(rng, i):
    """Two to four paths, one failing for good a third of the way in; half the cases
    with CMT's algorithms and CMT-PF off (a plain SCTP sender that must find the dead
    path by Path.Max.Retrans timeouts)."""
    n = rng.choice([2, 3, 4])
    paths = []
    for _ in range(n):
        paths.append({
            "rate_bps": int(round(log_uniform(rng, 1e6, 20e6), -3)),
            "delay_ms": round(log_uniform(rng, 2, 100), 1),
            "loss": 0.0 if rng.random() < 0.5 else round(log_uniform(rng, 0.001, 0.03), 4),
            "queue": rng.choice([20, 50, 100]),
        })
    plain = rng.random() < 0.5
    d = duration_for(paths, 1500, rng.choice([60, 90]))
    return {
        "id": f"f{i:03d}",
        "paths": paths,
        "rbuf": int(log_uniform(rng, 64 * 1024, 1024 * 1024)),
        "rtx": rng.randrange(5),
        "cmt": not plain,
        "pf": False if plain else rng.random() < 0.5,
        "fail": [rng.randrange(n), round(d / 3, 1)],
        "duration_s": d,
    }


def knobs(case):
    """A case's settings, with the defaults of cases drawn without --wide."""
    cmt = case.get("cmt", True)
    return {
        "sfr": case.get("sfr", cmt), "cuc": case.get("cuc", cmt), "dac": case.get("dac", cmt),
        "pf_cwnd": case.get("pf_cwnd", 2), "mtu": case.get("mtu", 1500),
        "delack": case.get("delack", True), "sack_delay_ms": case.get("sack_delay_ms", 200),
        "min_rto_ms": case.get("min_rto_ms", 1000), "loss_rev": case.get("loss_rev", False),
    }


def payload(case):
    """User bytes per DATA chunk: MTU - 20 IP - 12 SCTP - 16 DATA header."""
    return knobs(case)["mtu"] - 48


def duration_for(paths, mtu=1500, longest=DURATION_S):
    """`longest` s, or less when the paths together could carry more chunks than ns-2's
    16-bit stream sequence numbers survive (whole seconds, at least 2)."""
    chunks_per_s = sum(p["rate_bps"] for p in paths) / (mtu * 8)
    return max(2, min(longest, int(SSN_SAFE_CHUNKS / chunks_per_s)))


# ----- ns-2 -----

AGENT_LINE = re.compile(r"time: (\S+)\s+saddr: \S+\s+sport: \S+\s+daddr: (\d+)\s+dport: \S+\s+(.*)")


def path_of_node(node):
    """Receiver-side interface node 3 + 2i -> path i."""
    return (node - 3) // 2


def parse_agent(text, n):
    """Timeouts and cwnd cuts per destination, and the fast-retransmit counter, each
    with its time."""
    out = {"timeouts": [], "fr": [], "cwnd": []}
    last_cwnd = [None] * n
    for line in text.splitlines():
        fr = re.search(r"time: (\S+)\s+frCount: (\d+)", line)
        if fr:
            out["fr"].append((float(fr.group(1)), int(fr.group(2))))
            continue
        m = AGENT_LINE.search(line)
        if not m:
            continue
        t, p, rest = float(m.group(1)), path_of_node(int(m.group(2))), m.group(3)
        if not 0 <= p < n:
            continue
        if rest.startswith("DataTimeout"):
            out["timeouts"].append((t, p))
        elif rest.startswith("cwnd:"):
            cwnd = int(rest.split()[1])
            if last_cwnd[p] is not None and cwnd < last_cwnd[p]:
                out["cwnd"].append((t, p))
            last_cwnd[p] = cwnd
    return out


def parse_trace(lines, n, duration):
    """Goodput and per-path counts over [t0, t0 + duration), t0 = first DATA packet.

    A DATA packet is a transmission the first time its uid shows up on a path's data
    link (error-model drops show only as "d", queue drops as "+" then "d"); it is a
    retransmission when its TSN was sent before. Goodput comes from the cumulative TSN
    of the SACKs the receiver sends."""
    t0 = None
    seen = set()
    sent, lost, rtx = [0] * n, [0] * n, [0] * n
    last_tx = {}  # tsn -> (path, time) of its latest transmission
    rtx_events = []  # (time, path, previous path, previous time)
    cum = 0
    for line in lines:
        f = line.split()
        if len(f) < 13 or f[4] != "sctp":
            continue
        ev, t, a, b, kind = f[0], float(f[1]), int(f[2]), int(f[3]), f[6][-1]
        if kind == "D" and a >= 2 and a % 2 == 0 and b == a + 1:
            if t0 is None:
                t0 = t
            p, inside = (a - 2) // 2, t < t0 + duration
            uid, tsn = int(f[12]), int(f[11])
            if uid not in seen:
                seen.add(uid)
                if tsn in last_tx and inside:
                    rtx[p] += 1
                    rtx_events.append((t, p) + last_tx[tsn])
                last_tx[tsn] = (p, t)
                if inside:
                    sent[p] += 1
            if ev == "d" and inside:
                lost[p] += 1
        elif kind == "S" and ev == "+" and a >= 3 and a % 2 == 1 and b == a - 1:
            if t0 is not None and t < t0 + duration:
                cum = max(cum, int(f[11]))
    return t0, cum, sent, lost, rtx, rtx_events


def run_ns2(case, seed, workdir, wall_limit):
    if case.get("fail") and "t0_guess" not in case:
        # Where this seed's first DATA chunk goes out: a short run without the failure
        # (the same seed draws the same losses up to then).
        probe = run_ns2(dict(case, fail=None, duration_s=1), seed, workdir, wall_limit)
        if probe["status"] != "ok":
            return probe
        case = dict(case, t0_guess=round(probe["t0"], 6))
    n = len(case["paths"])
    d = case["duration_s"]
    trace = os.path.join(workdir, "trace.tr")
    agent = os.path.join(workdir, "agent.tr")
    k = knobs(case)
    args = ["ns", os.path.join(HERE, "case.tcl"), f"seed={seed}", f"stop={d + SLACK_S}",
            f"rbuf={case['rbuf']}", f"rtx={case['rtx']}", f"pf={int(case['pf'])}",
            f"pfcwnd={k['pf_cwnd']}", f"mtu={k['mtu']}", f"delack={int(k['delack'])}",
            f"sackdelay={k['sack_delay_ms'] / 1000}", f"minrto={k['min_rto_ms'] / 1000}",
            f"lossrev={int(k['loss_rev'])}", f"trace={trace}", f"agent={agent}"]
    if case.get("fail"):
        # ns-2's clock includes the handshake: the failure is put that much later, so
        # that it falls at the same time after the first DATA chunk (`t0_guess`).
        args.append(f"fail={case['fail'][0]}:{case['fail'][1] + case.get('t0_guess', 0.0)}")
    for name in ("sfr", "cuc", "dac"):
        args.append(f"{name}={int(k[name])}")
    for p in case["paths"]:
        args.append(f"path={p['rate_bps']}:{p['delay_ms']}:{p['loss']}:{p['queue']}")
    try:
        subprocess.run(args, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=wall_limit, check=True)
    except subprocess.TimeoutExpired:
        return {"status": "hung"}
    except subprocess.CalledProcessError as e:
        return {"status": f"failed (exit {e.returncode})"}
    with open(agent, "rb") as fh:
        ag = parse_agent(fh.read().decode("latin-1"), n)
    with open(trace) as fh:
        t0, cum, sent, lost, rtx, rtx_events = parse_trace(fh, n, d)
    if t0 is None or t0 + d > d + SLACK_S:
        return {"status": "late start" if t0 else "no data"}
    end = t0 + d
    inside = lambda t: t0 <= t < end
    timeouts = [0] * n
    tout_times = [[] for _ in range(n)]
    for t, p in ag["timeouts"]:
        tout_times[p].append(t)
        if inside(t):
            timeouts[p] += 1
    fast = [0] * n
    for t, _, prev_p, prev_t in rtx_events:
        if not any(prev_t < x <= t for x in tout_times[prev_p]):
            fast[prev_p] += 1
    cwnd_cuts = [0] * n
    for t, p in ag["cwnd"]:
        if inside(t):
            cwnd_cuts[p] += 1
    fr_events = 0
    prev = 0
    for t, v in ag["fr"]:
        if v > prev and inside(t):
            fr_events += v - prev
        prev = v
    return {
        "status": "ok",
        "t0": t0,
        "goodput_mbps": cum * payload(case) * 8 / d / 1e6,
        "fr_events": fr_events,
        "paths": [{
            "sent": sent[i], "lost": lost[i], "rtx": rtx[i],
            "fast": fast[i], "timeouts": timeouts[i], "cwnd_cuts": cwnd_cuts[i],
        } for i in range(n)],
    }


# ----- cmtlab -----

def scenario_toml(case):
    """The cmtlab scenario of a case."""
    k = knobs(case)
    lines = [
        'name = "ns2-diff"', "seed = 1", f'duration = "{case["duration_s"]}s"',
        "[association]", 'compat = "ns2"', 'scheduler = "round-robin"',
        f'rtx = "{POLICIES[case["rtx"]]}"', f'pf = {str(case["pf"]).lower()}',
        'loss_rate = "oracle"', f"pf_cwnd_mtus = {k['pf_cwnd']}", f"mtu = {k['mtu']}",
        f"sack_freq = {2 if k['delack'] else 1}", f'sack_delay = "{k["sack_delay_ms"]}ms"',
        f'rto_min = "{k["min_rto_ms"]}ms"',
    ]
    for name in ("sfr", "cuc", "dac"):
        lines.append(f"{name} = {str(k[name]).lower()}")
    direction = "both" if k["loss_rev"] else "forward"
    lines += ["[receiver]", f"rbuf = {case['rbuf']}"]
    for i, p in enumerate(case["paths"]):
        # ns-2's DropTail drops when the waiting packets would reach queue-limit
        # (`q_->length() + 1 >= qlim_`): at most qlim − 1 wait behind the one on the
        # wire. cmtlab's `queue` counts the waiting packets only.
        lines += ["[[links]]", f'name = "p{i}"', f'rate = "{p["rate_bps"]}bps"',
                  f'delay = "{p["delay_ms"]}ms"', f"queue = {p['queue'] - 1}",
                  f"loss = {p['loss']}", f'loss_direction = "{direction}"']
    for i in range(len(case["paths"])):
        lines += ["[[paths]]", f'name = "p{i}"', f'links = ["p{i}"]']
    if case.get("fail"):
        lines += ["[[events]]", f'at = "{case["fail"][1]}s"', f'link = "p{case["fail"][0]}"',
                  'state = "down"']
    return "\n".join(lines) + "\n"


def run_cmtlab(case, seed, workdir, binary, extra_sets=()):
    scen = os.path.join(workdir, "case.toml")
    with open(scen, "w") as fh:
        fh.write(scenario_toml(case))
    out = os.path.join(workdir, "summary.json")
    args = [binary, "run", scen, "--set", f"seed={seed}", "--json", out]
    for s in extra_sets:
        args += ["--set", s]
    r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return {"status": f"failed: {r.stderr.strip()}"}
    with open(out) as fh:
        s = json.load(fh)
    return {
        "status": "ok",
        "goodput_mbps": s["goodput_mbps"],
        "fr_events": s["fast_retransmits"],
        "paths": [{
            "sent": p["sent_packets"], "lost": p["lost_packets"], "rtx": p["retransmissions"],
            "fast": p["fast_retransmits"], "timeouts": p["timeouts"],
            "cwnd_cuts": p["cwnd_reductions"],
        } for p in s["paths"]],
    }


# ----- statistics -----

T95 = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26,
       10: 2.23, 12: 2.18, 15: 2.13, 20: 2.09, 30: 2.04, 60: 2.00}


def t95(df):
    keys = sorted(T95)
    for k in keys:
        if df <= k:
            return T95[k]
    return 1.96


def mean_sd(xs):
    m = sum(xs) / len(xs)
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
    return m, sd


# The bands the mechanism is held to, per path: (counter, relative band, the least ns-2
# mean that makes the ratio meaningful). The bands are counting noise: a mean over 6
# seeds of a Poisson count of mean m has a relative SD of 1/sqrt(6m), and the ratio of
# two such means 1.96 * sqrt(2 / (6m)) at 95 %: 50 % at the least timeout mean of 5, 25 %
# at the least retransmission mean of 20, widened to 35 % because retransmissions come
# in bursts (one T3 resends a window). DATA packets sent are not rare events; 10 % is the
# goodput band.
MECHANISM_BANDS = [("sent", 0.10, 100), ("rtx", 0.35, 20), ("timeouts", 0.50, 5)]


# A path whose retransmissions differ by more than this factor either way is flagged
# whatever its counts' noise: such a gap is a different recovery, not a different draw
# (it found the retransmissions to a potentially-failed path, and the after-failure gap).
RTX_FLAG_FACTOR = 2.0
RTX_FLAG_LEAST = 10  # retransmissions per run on the larger side, to make the ratio mean something


def rtx_flags(paths):
    """The paths whose mean retransmissions differ by more than RTX_FLAG_FACTOR."""
    out = []
    for i, p in enumerate(paths):
        ns, cm = p["rtx"]
        if max(ns, cm) < RTX_FLAG_LEAST:
            continue
        if min(ns, cm) * RTX_FLAG_FACTOR < max(ns, cm):
            out.append(f"p{i} rtx {ns:.0f} vs {cm:.0f}")
    return out


def mechanism_outside(paths):
    """The per-path counters outside their band (MECHANISM_BANDS), as text, and how
    many were checked."""
    out, checked = [], 0
    for i, p in enumerate(paths):
        for key, band, least in MECHANISM_BANDS:
            ns, cm = p[key]
            if ns < least:
                continue
            checked += 1
            if abs(cm / ns - 1) > band:
                out.append(f"p{i} {key} {cm / ns:.2f}")
    return {"checked": checked, "outside": out}


def compare(case, ns_runs, cm_runs):
    """Ratio of mean goodputs with a 95 % CI (Welch; the two simulators' seeds are
    independent, so the runs are not paired), per-path mechanism means, and a verdict."""
    ns_ok = [r for r in ns_runs if r["status"] == "ok"]
    cm_ok = [r for r in cm_runs if r["status"] == "ok"]
    band = 0.15 if len(case["paths"]) == 1 else 0.10
    res = {"id": case["id"], "band": band, "ns2_runs": len(ns_ok),
           "ns2_failed": [r["status"] for r in ns_runs if r["status"] != "ok"],
           "cmtlab_runs": len(cm_ok)}
    if len(ns_ok) < 2 or len(cm_ok) < 2:
        res["verdict"] = "too few runs"
        return res
    a = [r["goodput_mbps"] for r in ns_ok]
    b = [r["goodput_mbps"] for r in cm_ok]
    (ma, sa), (mb, sb) = mean_sd(a), mean_sd(b)
    ratio = mb / ma if ma > 0 else float("inf")
    se = math.sqrt(sa ** 2 / len(a) + sb ** 2 / len(b))
    # Welch-Satterthwaite degrees of freedom
    num = (sa ** 2 / len(a) + sb ** 2 / len(b)) ** 2
    den = ((sa ** 2 / len(a)) ** 2 / (len(a) - 1) + (sb ** 2 / len(b)) ** 2 / (len(b) - 1))
    df = num / den if den > 0 else len(a) + len(b) - 2
    half = t95(df) * se
    res.update({
        "ns2_goodput": [ma, sa], "cmtlab_goodput": [mb, sb], "ratio": ratio,
        "diff_ci": [mb - ma - half, mb - ma + half],
    })
    keys = ["sent", "lost", "rtx", "fast", "timeouts", "cwnd_cuts"]
    res["paths"] = [{
        k: [mean_sd([r["paths"][i][k] for r in ns_ok])[0],
            mean_sd([r["paths"][i][k] for r in cm_ok])[0]] for k in keys
    } for i in range(len(case["paths"]))]
    res["mechanism"] = mechanism_outside(res["paths"])
    res["rtx_2x"] = rtx_flags(res["paths"])
    lo, hi = (1 - band) * ma, (1 + band) * ma
    if lo <= mb <= hi:
        res["verdict"] = "within"
    elif mb - ma + half >= lo - ma and mb - ma - half <= hi - ma:
        res["verdict"] = "outside (CI reaches the band)"
    else:
        res["verdict"] = "outside"
    return res


# ----- driver -----

def run_case(case, seeds, binary, wall_limit):
    ns_runs, cm_runs = [], []
    with tempfile.TemporaryDirectory(prefix="ns2diff-") as tmp:
        for k in range(seeds):
            w = os.path.join(tmp, f"ns{k}")
            os.makedirs(w)
            ns_runs.append(run_ns2(case, NS2_SEED_BASE + 7919 * k, w, wall_limit))
            shutil.rmtree(w)
            w = os.path.join(tmp, f"cm{k}")
            os.makedirs(w)
            cm_runs.append(run_cmtlab(case, k + 1, w, binary))
            shutil.rmtree(w)
    return {"case": case, "ns2": ns_runs, "cmtlab": cm_runs,
            "compare": compare(case, ns_runs, cm_runs)}


def cmd_rerun(args):
    """cmtlab again on every case of a finished run, beside its stored ns-2 runs."""
    binary = os.environ.get("CMTLAB", os.path.join(ROOT, "target", "release", "cmtlab"))
    os.makedirs(args.out, exist_ok=True)
    names = sorted(n for n in os.listdir(args.dir) if n.endswith(".json"))

    def one(name):
        with open(os.path.join(args.dir, name)) as fh:
            old = json.load(fh)
        case, ns_runs = old["case"], old["ns2"]
        with tempfile.TemporaryDirectory(prefix="ns2diff-") as tmp:
            cm_runs = []
            for k in range(len(ns_runs)):
                w = os.path.join(tmp, f"cm{k}")
                os.makedirs(w)
                cm_runs.append(run_cmtlab(case, k + 1, w, binary))
        r = {"case": case, "ns2": ns_runs, "cmtlab": cm_runs,
             "compare": compare(case, ns_runs, cm_runs)}
        with open(os.path.join(args.out, name), "w") as fh:
            json.dump(r, fh)
        c = r["compare"]
        print(f"{case['id']}: {c['verdict']}  ratio {c.get('ratio', float('nan')):.3f}",
              flush=True)

    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for _ in ex.map(one, names):
            pass


def read_cases(path):
    with open(path) as fh:
        return [json.loads(l) for l in fh if l.strip()]


def cmd_run(args):
    binary = os.environ.get("CMTLAB", os.path.join(ROOT, "target", "release", "cmtlab"))
    os.makedirs(args.out, exist_ok=True)
    todo = [c for c in read_cases(args.cases)
            if not os.path.exists(os.path.join(args.out, c["id"] + ".json"))]

    def one(case):
        r = run_case(case, args.seeds, binary, args.wall_limit)
        tmp = os.path.join(args.out, case["id"] + ".json.part")
        with open(tmp, "w") as fh:
            json.dump(r, fh)
        os.replace(tmp, os.path.join(args.out, case["id"] + ".json"))
        c = r["compare"]
        print(f"{case['id']}: {c['verdict']}  ratio {c.get('ratio', float('nan')):.3f}",
              flush=True)
        return r

    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for _ in ex.map(one, todo):
            pass


def cmd_check(args):
    binary = os.environ.get("CMTLAB", os.path.join(ROOT, "target", "release", "cmtlab"))
    cases = read_cases(args.cases)
    with ThreadPoolExecutor(max_workers=args.jobs) as ex:
        for r in ex.map(lambda c: run_case(c, args.seeds, binary, args.wall_limit), cases):
            print(json.dumps(r["compare"]), flush=True)


def describe(case):
    k = knobs(case)
    ps = " + ".join(f"{p['rate_bps'] / 1e6:g}M/{p['delay_ms']:g}ms/{100 * p['loss']:g}%/q{p['queue']}"
                    for p in case["paths"])
    algos = "/".join(n.upper() for n in ("sfr", "cuc", "dac") if k[n]) or "no SFR/CUC/DAC"
    pf = f"PF{k['pf_cwnd']}" if case["pf"] else "no PF"
    extra = [f"MTU {k['mtu']}"] if k["mtu"] != 1500 else []
    extra += [] if k["delack"] else ["no delayed SACK"]
    extra += [f"SACK delay {k['sack_delay_ms']} ms"] if k["delack"] and k["sack_delay_ms"] != 200 else []
    extra += [f"minRTO {k['min_rto_ms'] / 1000:g} s"] if k["min_rto_ms"] != 1000 else []
    extra += ["loss both ways"] if k["loss_rev"] else []
    extra += [f"p{case['fail'][0]} fails at {case['fail'][1]:g} s"] if case.get("fail") else []
    flags = ", ".join([POLICIES[case["rtx"]], algos, pf] + extra)
    return f"{ps}; rbuf {case['rbuf'] // 1024} KB; {flags}"


def cmd_report(args):
    rows = []
    for name in sorted(os.listdir(args.dir)):
        if name.endswith(".json"):
            with open(os.path.join(args.dir, name)) as fh:
                rows.append(json.load(fh))
    counts = {}
    for r in rows:
        v = r["compare"]["verdict"]
        counts[v] = counts.get(v, 0) + 1
    hung = sum(sum(1 for x in r["ns2"] if x["status"] == "hung") for r in rows)
    total = sum(len(r["ns2"]) for r in rows)
    print(f"cases: {len(rows)}; ns-2 runs: {total}, of which hung (killed, not averaged): {hung}")
    for v, k in sorted(counts.items()):
        print(f"- {v}: {k}")
    print()
    flagged = [r["compare"]["id"] for r in rows if r["compare"].get("rtx_2x")]
    print(f"- per-path retransmissions more than {RTX_FLAG_FACTOR:g}x apart: {len(flagged)}"
          + (f" ({', '.join(flagged)})" if flagged else ""))
    print()
    print("| case | setup | ns-2 Mbit/s | cmtlab Mbit/s | ratio | verdict | mechanism outside its band |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        c = r["compare"]
        if "ratio" not in c:
            print(f"| {c['id']} | {describe(r['case'])} | | | | {c['verdict']} |")
            continue
        mech = c.get("mechanism", {"checked": 0, "outside": []})
        mtext = ", ".join(mech["outside"]) or f"{mech['checked']} in band"
        if c.get("rtx_2x"):
            mtext += "; **rtx 2x: " + ", ".join(c["rtx_2x"]) + "**"
        print(f"| {c['id']} | {describe(r['case'])} | {c['ns2_goodput'][0]:.3f} ± {c['ns2_goodput'][1]:.3f} "
              f"| {c['cmtlab_goodput'][0]:.3f} ± {c['cmtlab_goodput'][1]:.3f} | {c['ratio']:.3f} | {c['verdict']} | {mtext} |")
    if args.mechanism:
        print()
        print("Per path, ns-2 / cmtlab means: sent, lost, rtx, fast, timeouts, cwnd cuts")
        for r in rows:
            c = r["compare"]
            if "paths" not in c:
                continue
            for i, p in enumerate(c["paths"]):
                cells = "  ".join(f"{k} {p[k][0]:.0f}/{p[k][1]:.0f}" for k in p)
                print(f"{c['id']} p{i}: {cells}")


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `diff.py report … | head` ends quietly
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--cases", type=int, default=200)
    g.add_argument("--seed", type=int, default=1)
    kind = g.add_mutually_exclusive_group()
    kind.add_argument("--wide", action="store_true")
    kind.add_argument("--pf-class", action="store_true")
    kind.add_argument("--failure", action="store_true")
    for name in ("run", "check"):
        r = sub.add_parser(name)
        r.add_argument("cases")
        r.add_argument("--seeds", type=int, default=8)
        r.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
        r.add_argument("--wall-limit", type=float, default=120.0)
        if name == "run":
            r.add_argument("--out", required=True)
    rr = sub.add_parser("rerun")
    rr.add_argument("dir")
    rr.add_argument("--out", required=True)
    rr.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    rep = sub.add_parser("report")
    rep.add_argument("dir")
    rep.add_argument("--mechanism", action="store_true")
    args = ap.parse_args()
    if args.cmd == "gen":
        rng = random.Random(args.seed)
        for i in range(args.cases):
            gen = (gen_case_wide if args.wide else gen_case_pf if args.pf_class
                   else gen_case_failure if args.failure else gen_case)
            print(json.dumps(gen(rng, i)))
    elif args.cmd == "run":
        cmd_run(args)
    elif args.cmd == "check":
        cmd_check(args)
    elif args.cmd == "rerun":
        cmd_rerun(args)
    else:
        cmd_report(args)


if __name__ == "__main__":
    main()
