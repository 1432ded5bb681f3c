#!/usr/bin/env python3
"""cmtlab with the `linux-mptcp` preset against Linux kernel MPTCP, in the same run, over
the same tbf-shaped paths between two private network namespaces, with and without
random loss.

    sudo tools/netns/vs_kernel.py [--mb 20] [--runs 2]     (root; iproute2, nftables, ethtool; a release build)

Each case builds 2 or 3 veth paths (rates in the table; tbf both ways, 50 ms of queue;
this kernel has no netem, so no delay), optionally drops a share of the sender's
data packets on some paths at random, where they arrive (nftables `numgen random`, TCP and UDP alike),
and moves the same file with:

  preset     `cmtlab send/recv --preset linux-mptcp` (upstream's scheduler, rtx-same,
             CUBIC, RACK-TLP, RTO.Min 0.2 s)
  cmtlab     `cmtlab send/recv` with its defaults (round-robin, RFC 9260's detection)
  kernel     kernel MPTCP (protocol 262), one subflow per path, the in-kernel path
             manager and the default scheduler and congestion control

Measured per run: goodput (file size over the receiving application's transfer time)
and each path's share of the bytes the sender put on the wire (its interfaces' tx
counters, the same for both stacks). The stacks alternate (each round runs each once)
and `--runs` rounds pair them: the table gives each stack's paired difference from the
kernel, the mean of the per-round ratios − 1 with its 95 % Student t half-width.
`--case K` runs only the K-th case. Prints a Markdown table; BENCHMARKS.md has the
last one.

    sudo tools/netns/vs_kernel.py --failover [--mb 30] [--runs 3]

instead cuts path 2 of 20 + 10 Mbit/s for good (nftables drops everything on it, both
ways) 2 s after the first byte reaches the receiving application, and measures the
*stall*: for the kernel, the longest time after the cut in which the received file
did not grow (its size sampled every 5 ms; its reader writes each read unbuffered); for
cmtlab, which writes through a 1 MiB buffer, the longest time between two in-order
deliveries in its receiver's trace. Stacks, alternated round by round: the preset, the
preset's algorithms without reinjection (`--reinject off`), both again with a 256 KB
receive buffer, and the kernel; each mean is also given as a multiple of the kernel's.
"""
import csv
import argparse, glob, hashlib, json, os, subprocess, sys, threading, time

S, R = "cmtvkS", "cmtvkR"
HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("CMTLAB", os.path.join(HERE, "../../target/release/cmtlab"))
MPTCP_PY = os.path.join(HERE, "mptcp.py")
# The kernel sender's congestion control: Linux's default, CUBIC, whatever this host's
# `net.ipv4.tcp_congestion_control` says (namespaces inherit it; it may be bbr). The
# preset runs CUBIC as Linux does.
KERNEL_CC = os.environ.get("KERNEL_CC", "cubic")

# (name, rates, drop per mille per path)
CASES = [
    ("2 paths, no loss", ["20mbit", "10mbit"], [0, 0]),
    ("2 paths, 1 % loss on each", ["20mbit", "10mbit"], [10, 10]),
    ("3 paths, no loss", ["50mbit", "20mbit", "5mbit"], [0, 0, 0]),
    ("3 paths, 0.5 % loss on each", ["50mbit", "20mbit", "5mbit"], [5, 5, 5]),
]


# Two-sided 95 % Student t quantiles by degrees of freedom (1.96 beyond the table).
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
       9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
       16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042}


def paired(a, b):
    """Mean of the per-pair relative differences a/b − 1 and its 95 % t half-width
    (NaN with fewer than two pairs)."""
    d = [x / y - 1 for x, y in zip(a, b)]
    n = len(d)
    if n < 2:
        return (d[0] if d else float("nan")), float("nan")
    m = sum(d) / n
    sd = (sum((x - m) ** 2 for x in d) / (n - 1)) ** 0.5
    t = T95.get(n - 1) or next((T95[k] for k in sorted(T95) if k >= n - 1), 1.96)
    return m, t * sd / n ** 0.5


def sh(*args, check=True, **kw):
    return subprocess.run(args, check=check, capture_output=True, text=True, **kw)


def teardown():
    for ns in (S, R):
        sh("ip", "netns", "del", ns, check=False)


def setup(rates, drops):
    teardown()
    n = len(rates)
    sh("ip", "netns", "add", S)
    sh("ip", "netns", "add", R)
    for i in range(1, n + 1):
        sh("ip", "link", "add", f"s{i}", "netns", S, "type", "veth", "peer", "name", f"r{i}",
           "netns", R)
        sh("ip", "-n", S, "addr", "add", f"10.{i}.0.1/24", "dev", f"s{i}")
        sh("ip", "-n", R, "addr", "add", f"10.{i}.0.2/24", "dev", f"r{i}")
        for ns, dev in ((S, f"s{i}"), (R, f"r{i}")):
            sh("ip", "-n", ns, "link", "set", dev, "up")
            # The kernel's TCP hands the stack packets of up to 64 KB (it always builds
            # GSO packets); with offload off they are cut into segments before they
            # cross the veth, so the loss rule (on arrival, below) meets one segment
            # per packet, as it meets one of cmtlab's datagrams.
            sh("ip", "netns", "exec", ns, "ethtool", "-K", dev, "tso", "off", "gso", "off",
               "gro", "off")
            sh("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "tbf",
               "rate", rates[i - 1], "burst", "32kbit", "latency", "50ms")
    for ns in (S, R):
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "netns", "exec", ns, "sysctl", "-q", "net.mptcp.enabled=1")
    for ns in (S, R):
        sh("ip", "-n", ns, "mptcp", "limits", "set", "subflows", str(n), "add_addr_accepted",
           str(n))
    for i in range(2, n + 1):
        sh("ip", "-n", S, "mptcp", "endpoint", "add", f"10.{i}.0.1", "dev", f"s{i}", "subflow")
        sh("ip", "-n", R, "mptcp", "endpoint", "add", f"10.{i}.0.2", "dev", f"r{i}", "signal")
    # Random loss of the data direction, applied where each packet arrives at the
    # receiver's namespace: a drop at the sender's output would meet the kernel's 64 KB
    # GSO packets (one loss per up to 44 segments) but cmtlab's single datagrams.
    rules = "".join(
        f" iifname \"r{i + 1}\" meta l4proto {{ tcp, udp }} numgen random mod 1000 < {d} drop;"
        for i, d in enumerate(drops) if d > 0
    )
    if rules:
        table = ("table ip vkloss {\n chain in { type filter hook prerouting priority filter;"
                 f"{rules} }}\n}}\n")
        sh("ip", "netns", "exec", R, "nft", "-f", "-", input=table)


def tx_bytes(n):
    out = []
    for i in range(1, n + 1):
        r = sh("ip", "netns", "exec", S, "cat", f"/sys/class/net/s{i}/statistics/tx_bytes")
        out.append(int(r.stdout))
    return out


def run_cmtlab(n, data, extra):
    listen = ",".join(f"10.{i}.0.2:9899" for i in range(1, n + 1))
    local = ",".join(f"10.{i}.0.1:0" for i in range(1, n + 1))
    rx = subprocess.Popen(["ip", "netns", "exec", R, BIN, "recv", "--listen", listen, "--out",
                           "/tmp/vk.out", "--timeout", "120", "--json", *extra],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    tx = sh("ip", "netns", "exec", S, BIN, "send", "--local", local, "--remote", listen,
            "--timeout", "120", *extra, data, check=False)
    out, err = rx.communicate(timeout=130)
    if tx.returncode != 0 or rx.returncode != 0:
        raise RuntimeError(f"cmtlab failed: {tx.stderr[-500:]} {err[-500:]}")
    v = json.loads(out)
    return v["goodput_mbps"], v["sha256"]


def run_kernel(data):
    rx = subprocess.Popen(["ip", "netns", "exec", R, "python3", MPTCP_PY, "recv", "10.1.0.2",
                           "5201"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    sh("ip", "netns", "exec", S, "python3", MPTCP_PY, "send", "10.1.0.2", "5201", data,
       KERNEL_CC)
    out, _ = rx.communicate(timeout=130)
    # "mptcp received: N bytes in T s = G Mbit/s, sha256 H"
    words = out.split()
    return float(words[words.index("Mbit/s,") - 1]), words[-1]


def measure(stack, n, data):
    before = tx_bytes(n)
    if stack == "preset":
        g, sha = run_cmtlab(n, data, ["--preset", "linux-mptcp"])
    elif stack == "cmtlab":
        g, sha = run_cmtlab(n, data, [])
    else:
        g, sha = run_kernel(data)
    sent = [a - b for a, b in zip(tx_bytes(n), before)]
    return g, [x / sum(sent) for x in sent], sha


NO_REINJECT = ["--scheduler", "linux-mptcp", "--rtx", "rtx-same", "--cc", "linux-cubic",
               "--recovery", "rack-tlp", "--reinject", "off"]
OUT_DIR = "/tmp/vkf"


def received_size():
    """The largest file in OUT_DIR (cmtlab writes to a hidden `.NAME.part-…` first)."""
    sizes = [os.path.getsize(f) for f in glob.glob(OUT_DIR + "/.*") + glob.glob(OUT_DIR + "/*")
             if os.path.isfile(f)]
    return max(sizes, default=0)


def blackhole(on):
    for ns, dev in ((S, "s2"), (R, "r2")):
        sh("ip", "netns", "exec", ns, "nft", "delete", "table", "ip", "vkcut", check=False)
        if on:
            table = ("table ip vkcut {\n chain out { type filter hook postrouting priority filter;"
                     f" oifname \"{dev}\" drop; }}\n}}\n")
            sh("ip", "netns", "exec", ns, "nft", "-f", "-", input=table)


def failover_run(stack, data, want, cut_after=2.0):
    """One transfer with path 2 cut `cut_after` s after the first byte arrives: returns the
    stall (s), the transfer time (s) and whether the file arrived whole (SHA-256 `want`)."""
    sh("rm", "-rf", OUT_DIR)
    os.makedirs(OUT_DIR)
    out = OUT_DIR + "/out.bin"
    if stack == "kernel":
        rx = subprocess.Popen(["ip", "netns", "exec", R, "python3", MPTCP_PY, "recv",
                               "10.1.0.2", "5201", out], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
        tx_cmd = ["ip", "netns", "exec", S, "python3", MPTCP_PY, "send", "10.1.0.2", "5201", data,
                  KERNEL_CC]
    else:
        extra = {"preset": ["--preset", "linux-mptcp"], "no reinjection": NO_REINJECT,
                 "preset, 256 KB rbuf": ["--preset", "linux-mptcp", "--rbuf", "256KB"],
                 "no reinjection, 256 KB rbuf": NO_REINJECT + ["--rbuf", "256KB"]}[stack]
        listen, local = "10.1.0.2:9899,10.2.0.2:9899", "10.1.0.1:0,10.2.0.1:0"
        rx = subprocess.Popen(["ip", "netns", "exec", R, BIN, "recv", "--listen", listen,
                               "--out", out, "--timeout", "120", "--json",
                               "--trace", OUT_DIR + "/rx.csv", *extra],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        tx_cmd = ["ip", "netns", "exec", S, BIN, "send", "--local", local, "--remote", listen,
                  "--timeout", "120", *extra, data]
    time.sleep(0.5)
    tx = subprocess.Popen(tx_cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    samples, cut_at, first = [], None, None
    deadline = time.time() + 150
    while rx.poll() is None and time.time() < deadline:
        now, size = time.time(), received_size()
        samples.append((now, size))
        if first is None and size > 0:
            first = now
        if cut_at is None and first is not None and now >= first + cut_after:
            blackhole(True)
            cut_at = time.time()
        time.sleep(0.005)
    rx_out, _ = rx.communicate(timeout=10)
    tx.communicate(timeout=30)
    blackhole(False)
    got = hashlib.sha256(open(out, "rb").read()).hexdigest() if os.path.exists(out) else None
    grew = [t for (t, n), (_, m) in zip(samples, samples[1:]) if m > n]
    after = [cut_at] + [t for t in grew if t > cut_at] if cut_at else []
    stall = max((b - a for a, b in zip(after, after[1:])), default=float("nan"))
    if stack != "kernel":
        # cmtlab writes the file through a 1 MiB buffer, so its size grows in steps that
        # say nothing about when data reached the application; the receiver's trace
        # does: the longest time between two in-order deliveries. (The kernel's reader
        # here writes each read unbuffered, so its file's growth is its delivery.)
        stall = delivery_stall(OUT_DIR + "/rx.csv")
    return stall, (grew[-1] if grew else first) - first, got == want and rx.returncode == 0


def delivery_stall(trace):
    """The longest time between two consecutive deliveries to the application in a
    cmtlab receiver's trace (CSV, docs/metrics.md): with one cut in the transfer, the
    stall it caused (every other gap is a round trip or less)."""
    with open(trace) as f:
        times = [float(r["time_s"]) for r in csv.DictReader(f) if r["kind"] == "deliver"]
    return max((b - a for a, b in zip(times, times[1:])), default=float("nan"))


def failover(args, data):
    want = hashlib.sha256(open(data, "rb").read()).hexdigest()
    stacks = ("preset", "no reinjection", "preset, 256 KB rbuf", "no reinjection, 256 KB rbuf",
              "kernel")
    stalls = {s: [] for s in stacks}
    times = {s: [] for s in stacks}
    setup(["20mbit", "10mbit"], [0, 0])
    try:
        # One run of every stack per round, so that a drift of the machine meets them all.
        for _ in range(args.runs):
            for stack in stacks:
                stall, took, whole = failover_run(stack, data, want)
                if not whole:
                    raise RuntimeError(f"{stack}: the file did not arrive whole")
                stalls[stack].append(stall)
                times[stack].append(took)
    finally:
        teardown()
    mean = lambda v: sum(v) / len(v)
    print("| stack | stall after the cut (s), each run | mean | of the kernel's | transfer (s), mean |")
    print("|---|---|---|---|---|")
    for stack in stacks:
        print(f"| {stack} | {', '.join(f'{x:.2f}' for x in stalls[stack])} | "
              f"{mean(stalls[stack]):.2f} | {mean(stalls[stack]) / mean(stalls['kernel']):.2f} × | "
              f"{mean(times[stack]):.1f} |")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=None)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--failover", action="store_true")
    ap.add_argument("--case", type=int, default=0,
                    help=f"run only case K (1–{len(CASES)}) of the table; all by default")
    args = ap.parse_args()
    args.mb = args.mb or (30 if args.failover else 20)
    data = "/tmp/vk.bin"
    with open(data, "wb") as f:
        f.write(os.urandom(args.mb * 1_000_000))
    if args.failover:
        return failover(args, data)
    want = hashlib.sha256(open(data, "rb").read()).hexdigest()
    print("| case | stack | goodput (Mbit/s), each run | mean | path shares (%), mean "
          "| − kernel, paired (95 % t CI) |")
    print("|---|---|---|---|---|---|")
    stacks = ("preset", "kernel", "cmtlab")
    try:
        for name, rates, drops in CASES[args.case - 1:args.case] if args.case else CASES:
            setup(rates, drops)
            gs = {s: [] for s in stacks}
            shares = {s: [] for s in stacks}
            # Alternated: each round runs every stack once, and the rounds pair them.
            for _ in range(args.runs):
                for stack in stacks:
                    g, sh_, sha = measure(stack, len(rates), data)
                    if sha != want:
                        raise RuntimeError(f"{stack}: the file differs")
                    gs[stack].append(g)
                    shares[stack].append(sh_)
            for stack in stacks:
                v = gs[stack]
                mean_sh = [100 * sum(s[i] for s in shares[stack]) / len(v)
                           for i in range(len(rates))]
                m, hw = paired(v, gs["kernel"])
                diff = "" if stack == "kernel" else f"{100 * m:+.1f} % ± {100 * hw:.1f}"
                print(f"| {name} ({' + '.join(rates)}) | {stack} | "
                      f"{', '.join(f'{g:.1f}' for g in v)} | {sum(v) / len(v):.1f} | "
                      f"{' / '.join(f'{x:.0f}' for x in mean_sh)} | {diff} |", flush=True)
    finally:
        teardown()


if __name__ == "__main__":
    main()
