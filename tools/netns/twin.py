#!/usr/bin/env python3
"""The twin check: how well a calibrated scenario predicts real transfers.

    sudo tools/netns/twin.py [--set K] [--runs 1] [--seconds 6] [--sim-seeds 3]
                             [--out DIR]     (root; iproute2, nftables, ethtool; a release build)

For each path set below, builds the paths for real between two private network
namespaces (one veth per path; tbf for the rate and the queue, both ways; nftables for
random loss of the data direction where it arrives; this kernel has no netem, so the
first twelve sets' delay is the queues' own, and the last sets' paths go through a
`cmtlab relay` that adds a one-way delay each way), then:

  1. calibrates with the one command a user runs at the sender, `cmtlab send --measure
     --calibrate` (the receiver returns its arrival times with its SACKs;
     docs/calibrate.md); the receiver also writes its own trace, and the fit from the
     two ends' traces is compared with the one command's (the returned times checked);
  2. predicts: `cmtlab run` of that scenario for each scheduler below, moving a file
     the size of about `--seconds` of the paths' total rate, over `--sim-seeds` seeds;
  3. measures: the same file moved for real with each scheduler (`--runs` times each,
     the schedulers alternating).

It prints, per set and scheduler, predicted and measured goodput (file bytes over the
sender's time from its first packet to the close), their ratio, the data phase's
goodput (file bytes from the sender's first DATA to the last SACK, from its trace: what
the simulator's goodput measures, without the runtime's start and close), its ratio, the
per-path shares
of the DATA bytes sent (predicted, measured) and the receiver's reordering delay (mean
time a delivered chunk waited for an earlier one), then per set whether the schedulers
rank the same — counting only pairs whose measured goodputs differ by more than 5 %
and whose real runs do not overlap. A Markdown table; BENCHMARKS.md has the last one.
Each set's traces, scenario and results go to --out (default /tmp/cmtlab-twin);
`--refit` fits and predicts again from them, the real transfers as they were measured.
"""
import argparse, json, os, shutil, subprocess, sys, time, tomllib

S, R = "cmttwS", "cmttwR"
HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("CMTLAB", os.path.join(HERE, "../../target/release/cmtlab"))

# (rate Mbit/s, queue packets, random loss per mille[, one-way delay ms]) per path.
# Twelve sets spanning 2–4 paths, 2–100 Mbit/s, 0–3 % loss and queues of 10–300
# packets; then sets whose paths have propagation delay, which the userspace relay adds
# (`cmtlab relay`, run in the receiver's namespace in front of the receiver: this
# kernel has no netem). Through the relay the receiver sees the relay's address, not
# the sender's, so the calibration matches paths by the TSNs they carried.
SETS = [
    [(20, 50, 0), (10, 50, 0)],
    [(50, 100, 0), (5, 20, 0)],
    [(10, 30, 10), (10, 30, 0)],
    [(100, 300, 0), (20, 100, 5)],
    [(2, 10, 0), (8, 40, 0)],
    [(30, 60, 30), (15, 60, 10)],
    [(50, 100, 0), (20, 50, 0), (5, 20, 0)],
    [(20, 150, 5), (20, 150, 5), (20, 150, 5)],
    [(10, 10, 0), (40, 200, 20), (4, 30, 0)],
    [(25, 50, 0), (25, 50, 0), (10, 50, 0), (5, 50, 0)],
    [(60, 300, 2), (15, 80, 0), (8, 25, 10), (3, 12, 0)],
    [(40, 120, 0), (40, 20, 0)],
    [(20, 100, 0, 10), (10, 60, 0, 40)],
    [(30, 150, 5, 5), (8, 40, 0, 60), (4, 30, 0, 25)],
]
# Relays running for the current set.
RELAYS = []

# (label, `send`/`recv` arguments, scenario overrides)
SCHEDULERS = [
    ("round-robin", [], []),
    ("minrtt", ["--scheduler", "minrtt"], ['association.scheduler="minrtt"']),
    ("linux-mptcp", ["--preset", "linux-mptcp"], ['association.preset="linux-mptcp"']),
    ("db-cmt", ["--scheduler", "db-cmt"], ['association.scheduler="db-cmt"']),
]


def sh(*args, check=True, **kw):
    return subprocess.run(args, check=check, capture_output=True, text=True, **kw)


def teardown():
    for r in RELAYS:
        r.kill()
        r.wait()
    RELAYS.clear()
    for ns in (S, R):
        sh("ip", "netns", "del", ns, check=False)


# The path set being run.
CURRENT = []


def setup(paths):
    teardown()
    CURRENT[:] = paths
    sh("ip", "netns", "add", S)
    sh("ip", "netns", "add", R)
    for i, (rate, queue, loss, *_) in enumerate(paths, 1):
        sh("ip", "link", "add", f"s{i}", "netns", S, "type", "veth", "peer", "name", f"r{i}",
           "netns", R)
        sh("ip", "-n", S, "addr", "add", f"10.{i}.0.1/24", "dev", f"s{i}")
        sh("ip", "-n", R, "addr", "add", f"10.{i}.0.2/24", "dev", f"r{i}")
        for ns, dev in ((S, f"s{i}"), (R, f"r{i}")):
            sh("ip", "-n", ns, "link", "set", dev, "up")
            sh("ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off",
               "gro", "off")
            # A queue of `queue` full-size frames (1514 bytes as tbf counts them) behind
            # a 4 KB bucket.
            sh("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "tbf",
               "rate", f"{rate}mbit", "burst", "4kb", "limit", str(queue * 1514 + 4096))
    for ns in (S, R):
        sh("ip", "-n", ns, "link", "set", "lo", "up")
    rules = "".join(f' iifname "r{i}" meta l4proto udp numgen random mod 1000 < {loss} drop;'
                    for i, (_, _, loss, *_) in enumerate(paths, 1) if loss > 0)
    if rules:
        table = ("table ip twloss {\n chain in { type filter hook prerouting priority filter;"
                 f"{rules} }}\n}}\n")
        sh("ip", "netns", "exec", R, "nft", "-f", "-", input=table)
    # Delay: a relay in front of the receiver, port 9900 to 9899, both ways, with no
    # rate or queue of its own (tbf is the bottleneck).
    for i, p in enumerate(paths, 1):
        if len(p) > 3:
            spec = f"10.{i}.0.2:9900>10.{i}.0.2:9899,delay={p[3]}ms,queue=unlimited"
            RELAYS.append(subprocess.Popen(["ip", "netns", "exec", R, BIN, "relay", "--path",
                                            spec], stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL))
    if RELAYS:
        time.sleep(0.3)


def ends(n):
    """The receiver's --listen, the sender's --remote (through the relay where the path
    has delay) and --local."""
    listen = ",".join(f"10.{i}.0.2:9899" for i in range(1, n + 1))
    remote = ",".join(f"10.{i}.0.2:{9900 if len(CURRENT[i - 1]) > 3 else 9899}"
                      for i in range(1, n + 1))
    local = ",".join(f"10.{i}.0.1:0" for i in range(1, n + 1))
    return listen, remote, local


def pair(n, recv_args, send_args, what):
    """The receiver, then the sender, in their namespaces; both standard outputs. `what`
    names the run in the error when either end fails."""
    listen, remote, local = ends(n)
    rx = subprocess.Popen(["ip", "netns", "exec", R, BIN, "recv", "--listen", listen,
                           "--timeout", "120", *recv_args],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.4)
    tx = sh("ip", "netns", "exec", S, BIN, "send", "--local", local, "--remote", remote,
            "--timeout", "120", *send_args, check=False, timeout=150)
    out, err = rx.communicate(timeout=150)
    if tx.returncode != 0 or rx.returncode != 0:
        raise RuntimeError(f"{what} failed: {tx.stderr[-400:]} {err[-400:]}")
    return tx.stdout, out


def transfer(n, what, extra, rx_trace=None, tx_trace=None):
    """One real transfer (`what`: a file); the sender's and the receiver's JSON reports."""
    rt = ["--trace", rx_trace] if rx_trace else []
    tt = ["--trace", tx_trace] if tx_trace else []
    tx, rx = pair(n, ["--out", "/tmp/cmttw.out", "--json", *rt, *extra],
                  ["--json", *tt, *extra, *what], "transfer")
    return json.loads(tx), json.loads(rx)


def measure_one_command(n, secs, scenario, rx_trace):
    """`send --measure SECS --calibrate SCENARIO`, the one command at the sender, while
    the receiver writes its own trace too; the fit's report."""
    tx, _ = pair(n, ["--out", "/dev/null", "--trace", rx_trace],
                 ["--measure", str(secs), "--calibrate", scenario], "measurement")
    return tx[tx.find("arrival times returned"):]


def fitted(scenario):
    """Per link of a calibrated scenario: rate (bit/s), delay (ms), queue, loss share
    (a Gilbert-Elliott link's stationary p / (p + r))."""
    with open(scenario, "rb") as f:
        links = tomllib.load(f)["links"]
    return [{"rate": float(l["rate"].removesuffix("bps")),
             "delay": float(l["delay"].removesuffix("ms")),
             "queue": l["queue"],
             "loss": (l["gilbert"]["p"] / (l["gilbert"]["p"] + l["gilbert"]["r"])
                      if "gilbert" in l else l.get("loss", 0.0))}
            for l in links]


def agreement(a, b):
    """The largest differences between two fits of the same paths: rate (relative),
    delay (ms), queue (packets), loss (percentage points)."""
    fa, fb = fitted(a), fitted(b)
    return (max(abs(x["rate"] / y["rate"] - 1) for x, y in zip(fa, fb)),
            max(abs(x["delay"] - y["delay"]) for x, y in zip(fa, fb)),
            max(abs(x["queue"] - y["queue"]) for x, y in zip(fa, fb)),
            max(abs(x["loss"] - y["loss"]) * 100 for x, y in zip(fa, fb)))


def data_phase(trace):
    """Seconds from a sender's first DATA to the last SACK it received (its trace)."""
    first = last = None
    with open(trace) as f:
        next(f)
        for line in f:
            c = line.split(",", 6)
            if first is None and c[4] == "data":
                first = float(c[0])
            if c[4] == "ack" and c[5] == "arrive":
                last = float(c[0])
    return last - first


def reorder_mean(d):
    """The mean of a summary's `reordering_latency_ms` (ms), if it has one."""
    v = d.get("reordering_latency_ms")
    return v.get("mean") if isinstance(v, dict) else v


def shares(paths, key):
    tot = sum(p.get(key, 0) for p in paths) or 1
    return [p.get(key, 0) / tot for p in paths]


def simulate(scenario, overrides, size, seeds, out):
    vals = []
    for seed in range(1, seeds + 1):
        js = os.path.join(out, "sim.json")
        sets = [f"file_size={size}", f"seed={seed}", *overrides]
        args = [BIN, "run", scenario, "--json", js]
        for s in sets:
            args += ["--set", s]
        sh(*args)
        d = json.load(open(js))
        vals.append((d["goodput_mbps"], shares(d["paths"], "sent_bytes"),
                     reorder_mean(d)))
    g = sum(v[0] for v in vals) / len(vals)
    sh_ = [sum(v[1][i] for v in vals) / len(vals) for i in range(len(vals[0][1]))]
    ro = [v[2] for v in vals if v[2] is not None]
    return g, sh_, (sum(ro) / len(ro) if ro else None)


def run_set(k, paths, args):
    out = os.path.join(args.out, f"set{k}")
    scenario = os.path.join(out, "calibrated.toml")
    # The one command's traces: the sender's, and the receiver's rebuilt from the
    # arrival times it returned; and the receiver's own.
    st, rr = os.path.join(out, "calibrated.tx.csv"), os.path.join(out, "calibrated.rx.csv")
    rt = os.path.join(out, "receiver.csv")
    both = os.path.join(out, "both-ends.toml")
    if args.refit:
        # The real measurements as they were; the fit and the predictions afresh.
        old = json.load(open(os.path.join(out, "twin.json")))
        fit = sh(BIN, "calibrate", st, rr, "--out", scenario).stdout
        sh(BIN, "calibrate", st, rt, "--out", both)
        rows = []
        for r, (label, _, over) in zip(old["rows"], SCHEDULERS):
            pg, psh, pro = simulate(scenario, over, r["size"], args.sim_seeds, out)
            rows.append(dict(r, predicted=pg, pred_shares=psh, pred_reorder_ms=pro))
        json.dump(dict(old, fit=fit, rows=rows), open(os.path.join(out, "twin.json"), "w"),
                  indent=1)
        return fit, rows
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    n = len(paths)
    setup(paths)
    fit = measure_one_command(n, args.measure, scenario, rt)
    sh(BIN, "calibrate", st, rt, "--out", both)
    total = sum(p[0] for p in paths) * 1e6 / 8
    size = int(total * args.seconds)
    data = os.path.join(out, "file.bin")
    with open(data, "wb") as f:
        f.write(os.urandom(size))
    rows = []
    real = {label: [] for label, _, _ in SCHEDULERS}
    trace = os.path.join(out, "run.csv")
    for _ in range(args.runs):
        for label, extra, _ in SCHEDULERS:
            s, r = transfer(n, [data], extra, tx_trace=trace)
            real[label].append((s["goodput_mbps"], shares(s["paths"], "sent_bytes"),
                                reorder_mean(r), size * 8 / 1e6 / data_phase(trace)))
    os.remove(trace)
    os.remove(data)
    for label, _, over in SCHEDULERS:
        pg, psh, pro = simulate(scenario, over, size, args.sim_seeds, out)
        ms = real[label]
        mg = sum(m[0] for m in ms) / len(ms)
        msh = [sum(m[1][i] for m in ms) / len(ms) for i in range(n)]
        ros = [m[2] for m in ms if m[2] is not None]
        mro = sum(ros) / len(ros) if ros else None
        md = sum(m[3] for m in ms) / len(ms)
        rows.append({"set": k, "scheduler": label, "predicted": pg, "measured": mg,
                     "measured_data": md, "data_runs": [m[3] for m in ms],
                     "pred_shares": psh, "meas_shares": msh, "pred_reorder_ms": pro,
                     "meas_reorder_ms": mro, "size": size, "real_runs": [m[0] for m in ms]})
    json.dump({"paths": paths, "fit": fit, "rows": rows}, open(os.path.join(out, "twin.json"), "w"),
              indent=1)
    return fit, rows


def print_agreement(k, out):
    """How far the one command's fit (returned arrival times) is from the fit of the
    two ends' own traces."""
    d = agreement(os.path.join(out, "calibrated.toml"), os.path.join(out, "both-ends.toml"))
    print(f"| {k} | returned times vs the receiver's own trace: rates within "
          f"{100 * d[0]:.2f} %, delays {d[1]:.3f} ms, queues {d[2]} packets, loss "
          f"{d[3]:.3f} points | | | | | | | | | |", flush=True)
    return d


def ranking(rows):
    """Pairs of schedulers whose measured goodputs differ by more than 5 % with runs
    that do not overlap (every run of one above every run of the other), and how many
    of them the prediction orders the same way."""
    agree = total = 0
    for i, a in enumerate(rows):
        for b in rows[i + 1:]:
            if abs(a["measured"] / b["measured"] - 1) <= 0.05:
                continue
            ra, rb = a["real_runs"], b["real_runs"]
            if not (min(ra) > max(rb) or min(rb) > max(ra)):
                continue
            total += 1
            agree += (a["measured"] > b["measured"]) == (a["predicted"] > b["predicted"])
    return agree, total


def fmt_set(paths):
    return " + ".join(f"{p[0]}M/{p[1]}p" + (f"/{p[2] / 10:g}%" if p[2] else "")
                      + (f"/{p[3]}ms" if len(p) > 3 else "") for p in paths)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--set", type=int, action="append", help="run only set K (1-based)")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--measure", type=float, default=8.0)
    ap.add_argument("--sim-seeds", type=int, default=3)
    ap.add_argument("--out", default="/tmp/cmtlab-twin")
    ap.add_argument("--refit", action="store_true",
                    help="keep each set's traces and real transfers in --out; fit and "
                         "predict again (no namespaces, no root)")
    args = ap.parse_args()
    if os.geteuid() != 0 and not args.refit:
        sys.exit("twin.py: run as root (it creates network namespaces)")
    chosen = args.set or range(1, len(SETS) + 1)
    print("| set | paths (rate/queue/loss/delay) | scheduler | predicted Mbit/s | measured | "
          "predicted / measured | data phase | predicted / data phase | shares predicted | "
          "shares measured | reordering ms predicted / measured |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    errors, data_errors, agree, pairs = [], [], 0, 0
    worst = [0.0, 0.0, 0, 0.0]
    try:
        for k in chosen:
            fit, rows = run_set(k, SETS[k - 1], args)
            for r in rows:
                e = r["predicted"] / r["measured"] - 1
                ed = r["predicted"] / r["measured_data"] - 1
                errors.append(e)
                data_errors.append(ed)
                pr = "–" if r["pred_reorder_ms"] is None else f"{r['pred_reorder_ms']:.1f}"
                mr = "–" if r["meas_reorder_ms"] is None else f"{r['meas_reorder_ms']:.1f}"
                print(f"| {k} | {fmt_set(SETS[k - 1])} | {r['scheduler']} | "
                      f"{r['predicted']:.2f} | {r['measured']:.2f} | {1 + e:.3f} | "
                      f"{r['measured_data']:.2f} | {1 + ed:.3f} | "
                      f"{' '.join(f'{x:.2f}' for x in r['pred_shares'])} | "
                      f"{' '.join(f'{x:.2f}' for x in r['meas_shares'])} | {pr} / {mr} |",
                      flush=True)
            a, t = ranking(rows)
            agree, pairs = agree + a, pairs + t
            worst = [max(x, y) for x, y in zip(worst, print_agreement(
                k, os.path.join(args.out, f"set{k}")))]
            print(f"| {k} | ranking: {a} of {t} decided pairs ordered alike | | | | | | | | | |",
                  flush=True)
    finally:
        if not args.refit:
            teardown()
    for what, es in (("the measured goodput", errors), ("the data phase's", data_errors)):
        within = sum(abs(e) <= 0.10 for e in es)
        mean_abs = sum(abs(e) for e in es) / max(len(es), 1)
        bias = sum(es) / max(len(es), 1)
        print(f"\n{within} of {len(es)} predictions within ±10 % of {what} (mean absolute "
              f"error {100 * mean_abs:.1f} %, mean signed {100 * bias:+.1f} %).")
    print(f"{agree} of {pairs} decided scheduler pairs ranked alike.")
    print(f"The one command's fits against the two ends' own traces, worst over the sets: "
          f"rates within {100 * worst[0]:.2f} %, delays {worst[1]:.3f} ms, queues "
          f"{worst[2]} packets, loss {worst[3]:.3f} points.")


if __name__ == "__main__":
    main()
