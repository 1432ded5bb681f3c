#!/usr/bin/env python3
"""Failover benchmark: cmtlab and Linux kernel MPTCP, in the same run, under the same
faults of two tbf-shaped paths between two private network namespaces.

    sudo tools/netns/failover.py [--mb 40] [--only NAME]      (root; iproute2; a release build)

Paths: s1-r1 20 Mbit/s and s2-r2 10 Mbit/s, shaped both ways (this kernel has no
netem: no delay or loss). Each row moves the same file with `cmtlab send/recv` (its
defaults: outage handling, RTO.Min 0.2 s) and with kernel MPTCP (protocol 262, one
subflow per path, the in-kernel path manager), applying the fault 3 s into the transfer.

Measured per row and stack:
  completed  both ends finished and the receiver's SHA-256 is the file's
  stall      the longest time the receiving application got no data (for rows where
             every path is down this includes the outage; `stall - outage` is how long
             data took to flow again after it)
  back       how long after the fault ended the faulty path carried data again (its
             receive counter grew by more than 30 KB within 100 ms), sampled every 20 ms
             (every path's, "p1 / p2", where every path failed);
             in the rows where path 2's interface gets its first address, how long
             after that path 2 carried data
  goodput    file size / transfer time

Prints a Markdown table (BENCHMARKS.md has the last one).
"""
import argparse, hashlib, os, socket, subprocess, sys, threading, time

IPPROTO_MPTCP = 262
S, R = "cmtfoS", "cmtfoR"
RATES = {1: "20mbit", 2: "10mbit"}
HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("CMTLAB", os.path.join(HERE, "../../target/release/cmtlab"))


def sh(*args, check=True):
    return subprocess.run(args, check=check, capture_output=True, text=True)


def setup():
    teardown()
    sh("ip", "netns", "add", S)
    sh("ip", "netns", "add", R)
    for i in (1, 2):
        sh("ip", "link", "add", f"s{i}", "netns", S, "type", "veth", "peer", "name", f"r{i}", "netns", R)
        sh("ip", "-n", S, "addr", "add", f"10.{i}.0.1/24", "dev", f"s{i}")
        sh("ip", "-n", R, "addr", "add", f"10.{i}.0.2/24", "dev", f"r{i}")
        sh("ip", "-n", S, "link", "set", f"s{i}", "up")
        sh("ip", "-n", R, "link", "set", f"r{i}", "up")
        shape(i, RATES[i])
    for ns in (S, R):
        sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "netns", "exec", ns, "sysctl", "-q", "net.mptcp.enabled=1")
    sh("ip", "-n", S, "mptcp", "limits", "set", "subflows", "2", "add_addr_accepted", "2")
    sh("ip", "-n", R, "mptcp", "limits", "set", "subflows", "2", "add_addr_accepted", "2")
    sh("ip", "-n", S, "mptcp", "endpoint", "add", "10.2.0.1", "dev", "s2", "subflow")
    sh("ip", "-n", R, "mptcp", "endpoint", "add", "10.2.0.2", "dev", "r2", "signal")


def teardown():
    for ns in (S, R):
        sh("ip", "netns", "del", ns, check=False)


def shape(i, rate):
    for ns, dev in ((S, f"s{i}"), (R, f"r{i}")):
        sh("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", dev, "root", "tbf",
           "rate", rate, "burst", "32kbit", "latency", "50ms")


def link(i, up):
    sh("ip", "-n", S, "link", "set", f"s{i}", "up" if up else "down")


def blackhole(i, on):
    shape(i, "8bit" if on else RATES[i])


# The sender's fixed source port on every path (both stacks), so that a NAT rebinding
# can be written as a stateless rewrite.
SPORT, NATTED = 9900, 40000


def rebind(i, on):
    """A NAT gives path i's flow a new source port: nftables rewrites the sender's
    source port 9900 to 40000 (UDP and TCP) and maps replies back; what is still sent
    to the old port is dropped, as the old mapping is gone."""
    if not on:
        sh("ip", "netns", "exec", S, "nft", "delete", "table", "ip", "rebind", check=False)
        return
    a = f"10.{i}.0.1"
    rules = (
        "table ip rebind {\n"
        " chain out { type filter hook output priority raw;"
        f" ip saddr {a} udp sport {SPORT} udp sport set {NATTED};"
        f" ip saddr {a} tcp sport {SPORT} tcp sport set {NATTED}; }}\n"
        " chain pre { type filter hook prerouting priority raw;"
        f" ip daddr {a} udp dport {SPORT} drop; ip daddr {a} tcp dport {SPORT} drop;"
        f" ip daddr {a} udp dport {NATTED} udp dport set {SPORT};"
        f" ip daddr {a} tcp dport {NATTED} tcp dport set {SPORT}; }}\n}}\n"
    )
    subprocess.run(["ip", "netns", "exec", S, "nft", "-f", "-"], input=rules, check=True,
                   capture_output=True, text=True)


def readdress(i, on):
    """Path i's interface loses its address (on) and later gets another one, as a phone
    joining another network on the same radio. Kernel MPTCP's in-kernel path manager is
    told of the new address as mptcpd or NetworkManager would (an endpoint with the
    subflow flag); cmtlab names the interface in --local and follows it by itself."""
    if on:
        sh("ip", "-n", S, "addr", "del", f"10.{i}.0.1/24", "dev", f"s{i}")
    else:
        sh("ip", "-n", S, "addr", "add", f"10.{i}.0.11/24", "dev", f"s{i}")
        sh("ip", "-n", S, "mptcp", "endpoint", "add", f"10.{i}.0.11", "dev", f"s{i}", "subflow")


def new_interface(on):
    """Path 2's interface gets its first address (it had none when the transfer
    started). Kernel MPTCP is given it as a subflow endpoint, as mptcpd would."""
    if on:
        sh("ip", "-n", S, "addr", "add", "10.2.0.1/24", "dev", "s2")
        sh("ip", "-n", S, "mptcp", "endpoint", "add", "10.2.0.1", "dev", "s2", "subflow")


def handover(on):
    """The only path's address goes and path 2's interface gets its first one right
    after: WiFi gone, LTE up."""
    if on:
        sh("ip", "-n", S, "addr", "del", "10.1.0.1/24", "dev", "s1")
        new_interface(True)


def without_path_2():
    """The start of the new-interface rows: s2 without an address, no endpoint."""
    sh("ip", "-n", S, "addr", "del", "10.2.0.1/24", "dev", "s2", check=False)
    sh("ip", "-n", S, "mptcp", "endpoint", "flush", check=False)


def restore_both():
    sh("ip", "-n", S, "addr", "add", "10.1.0.1/24", "dev", "s1", check=False)
    sh("ip", "-n", S, "addr", "add", "10.2.0.1/24", "dev", "s2", check=False)
    sh("ip", "-n", S, "mptcp", "endpoint", "flush", check=False)
    sh("ip", "-n", S, "mptcp", "endpoint", "add", "10.2.0.1", "dev", "s2", "subflow")


def restore_address(i):
    sh("ip", "-n", S, "addr", "del", f"10.{i}.0.11/24", "dev", f"s{i}", check=False)
    sh("ip", "-n", S, "addr", "add", f"10.{i}.0.1/24", "dev", f"s{i}", check=False)
    sh("ip", "-n", S, "mptcp", "endpoint", "flush", check=False)
    sh("ip", "-n", S, "mptcp", "endpoint", "add", "10.2.0.1", "dev", "s2", "subflow")


# Faults: (name, paths affected, duration or None for good, apply(on) function).
def faults():
    def both(f):
        return lambda on: [f(1, on), f(2, on)]
    down = lambda i, on: link(i, not on)
    return [
        ("first path down for good", [1], None, lambda on: down(1, on)),
        ("one path down 5 s", [1], 5, lambda on: down(1, on)),
        ("one path down 20 s", [1], 20, lambda on: down(1, on)),
        ("one path blackholed 6 s", [1], 6, lambda on: blackhole(1, on)),
        ("one path blackholed 10 s", [1], 10, lambda on: blackhole(1, on)),
        ("one path flapping (1.5 s down / 1.5 s up, 12 s)", [1], 12, "flap"),
        ("every path down 5 s", [1, 2], 5, both(down)),
        ("every path down 10 s", [1, 2], 10, both(down)),
        ("every path blackholed 10 s", [1, 2], 10, both(blackhole)),
        ("every path down 30 s", [1, 2], 30, both(down)),
        ("every path down 120 s", [1, 2], 120, both(down)),
        (REBIND, [1], None, lambda on: rebind(1, on)),
        (READDRESS, [1], 5, lambda on: readdress(1, on)),
        (NEW_IFACE, [2], None, new_interface),
        (HANDOVER, [2], None, handover),
    ]


REBIND = "a NAT gives path 1 a new source port"
READDRESS = "path 1's address deleted, another one added 5 s later"
NEW_IFACE = "path 2's interface gets its first address mid-transfer"
HANDOVER = "full handover: path 1's address deleted, path 2's interface gets its first"


class Sampler(threading.Thread):
    """Receive counters of r1 and r2 every 20 ms, with wall-clock times."""

    def __init__(self):
        super().__init__(daemon=True)
        self.rows, self.stop = [], False

    def run(self):
        cmd = "while true; do echo $(date +%s.%N) $(cat /sys/class/net/r1/statistics/rx_bytes) " \
              "$(cat /sys/class/net/r2/statistics/rx_bytes); sleep 0.02; done"
        p = subprocess.Popen(["ip", "netns", "exec", R, "sh", "-c", cmd], stdout=subprocess.PIPE, text=True)
        for line in p.stdout:
            if self.stop:
                p.kill()
                return
            t, a, b = line.split()
            self.rows.append((float(t), int(a), int(b)))

    def share(self, path, start, end):
        """Path `path`'s share of the bytes both receive counters grew by in [start, end]."""
        rows = [r for r in self.rows if start <= r[0] <= end]
        if len(rows) < 2:
            return None
        got = [rows[-1][k] - rows[0][k] for k in (1, 2)]
        return got[path - 1] / max(1, sum(got))

    def back(self, path, since):
        """Seconds after `since` until path `path` carried > 30 KB within 100 ms."""
        rows = [r for r in self.rows if r[0] >= since]
        for k, r in enumerate(rows):
            for q in rows[k + 1:k + 6]:
                if q[path] - r[path] > 30_000:
                    return r[0] - since
        return None


def run_fault(stack, fault, data, mb):
    name, paths, dur, apply = fault
    out = f"/tmp/failover-{stack}.out"
    for f in (out,):
        if os.path.exists(f):
            os.remove(f)
    sampler = Sampler()
    sampler.start()
    # cmtlab follows interfaces it was given by name; the other rows keep addresses.
    by_name = name in (READDRESS, NEW_IFACE, HANDOVER)
    local = f"s1:{SPORT},s2:{SPORT}" if by_name else f"10.1.0.1:{SPORT},10.2.0.1:{SPORT}"
    if name in (NEW_IFACE, HANDOVER):
        without_path_2()
    rx, tx, timeline = start(stack, data, out, local)
    time.sleep(3)
    t_fault = time.time()
    if apply == "flap":
        while time.time() - t_fault < dur:
            link(1, False)
            time.sleep(1.5)
            link(1, True)
            time.sleep(1.5)
    else:
        apply(True)
        if dur is not None:
            time.sleep(dur)
            apply(False)
    t_end = time.time()
    rxo, txo = finish(rx, tx)
    sampler.stop = True
    if dur is None:
        apply(False)
    if name == READDRESS:
        restore_address(paths[0])
    if name in (NEW_IFACE, HANDOVER):
        restore_both()
    ok = rxo.returncode == 0 and txo.returncode == 0 and sha(out) == sha(data)
    times = timeline()
    stall = max((b - a for a, b in zip(times, times[1:])), default=None)
    back = None if dur is None else sampler.back(paths[0], t_end)
    if dur is not None and len(paths) > 1:
        back = [sampler.back(p, t_end) for p in paths]
    if name in (NEW_IFACE, HANDOVER):
        # How long after the address came path 2 carried data.
        back = sampler.back(2, t_fault)
    if name == REBIND:
        # The path's share of what arrived 1-6 s after the rebinding (in the table's
        # "path back" column): whether the stack still uses the path at all.
        back = sampler.share(paths[0], t_fault + 1, t_fault + 6)
    span = (times[-1] - times[0]) if len(times) > 1 else None
    goodput = mb * 8 * 1.048576 / span if (ok and span) else None
    return ok, stall, back, goodput


def start(stack, data, out, local):
    if stack == "cmtlab":
        trace = "/tmp/failover-trace.csv"
        rx = subprocess.Popen(["ip", "netns", "exec", R, BIN, "recv", "--listen", "10.1.0.2:9899,10.2.0.2:9899",
                               "--out", out, "--trace", trace, "--timeout", "600"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)
        tx = subprocess.Popen(["ip", "netns", "exec", S, BIN, "send", "--local", local,
                               "--remote", "10.1.0.2:9899,10.2.0.2:9899", "--timeout", "600", data],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

        def timeline():
            ts = []
            with open(trace) as f:
                next(f)
                for line in f:
                    c = line.split(",")
                    if c[5] == "deliver":
                        ts.append(float(c[0]))
            return ts
        return rx, tx, timeline
    log = "/tmp/failover-mptcp.log"
    rx = subprocess.Popen(["ip", "netns", "exec", R, sys.executable, __file__, "mptcp-recv", out, log],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    tx = subprocess.Popen(["ip", "netns", "exec", S, sys.executable, __file__, "mptcp-send", data],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def timeline():
        with open(log) as f:
            return [float(x) for x in f.read().split()]
    return rx, tx, timeline


def finish(rx, tx):
    out = []
    for p in (rx, tx):
        try:
            p.wait(timeout=700)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        out.append(p)
    return out[0], out[1]


def sha(path):
    if not os.path.exists(path):
        return None
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def mptcp_recv(out, log):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("10.1.0.2", 5201))
    s.listen(1)
    c, _ = s.accept()
    times = []
    with open(out, "wb") as f:
        while True:
            b = c.recv(1 << 16)
            if not b:
                break
            times.append(time.monotonic())
            f.write(b)
    c.sendall(b"k")
    with open(log, "w") as f:
        f.write("\n".join(f"{t:.6f}" for t in times))


def mptcp_send(path):
    data = open(path, "rb").read()
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # Linux's default congestion control, whatever this host's sysctl says (namespaces
    # inherit it; it may be bbr).
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION,
                 os.environ.get("KERNEL_CC", "cubic").encode())
    s.bind(("10.1.0.1", SPORT))
    s.connect(("10.1.0.2", 5201))
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    s.recv(1)


def fmt(x, unit="s"):
    return "–" if x is None else f"{x:.2f} {unit}" if unit else f"{x:.1f}"


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "mptcp-recv":
        return mptcp_recv(sys.argv[2], sys.argv[3])
    if len(sys.argv) > 1 and sys.argv[1] == "mptcp-send":
        return mptcp_send(sys.argv[2])
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=int, default=40)
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    if not os.access(BIN, os.X_OK):
        sys.exit(f"build first: cargo build --release ({BIN})")
    data = "/tmp/failover-src.bin"
    with open(data, "wb") as f:
        f.write(os.urandom(a.mb << 20))
    setup()
    try:
        print(f"{a.mb} MB over 20 + 10 Mbit/s (tbf, both ways); the fault 3 s in\n")
        print("| fault | stack | completed | in-order stall | path back in use after | goodput |")
        print("|---|---|---|---|---|---|")
        for fault in faults():
            if a.only and a.only not in fault[0]:
                continue
            for stack in ("cmtlab", "kernel MPTCP"):
                ok, stall, back, goodput = run_fault(stack, fault, data, a.mb)
                if isinstance(back, list):
                    back_text = " / ".join(fmt(b) for b in back)
                elif fault[0] == REBIND and back is not None:
                    back_text = f"path 1 carries {back * 100:.0f} % 1–6 s after"
                else:
                    back_text = fmt(back)
                print(f"| {fault[0]} | {stack} | {'yes' if ok else '**no**'} | {fmt(stall)} | "
                      f"{back_text} | {fmt(goodput, 'Mbit/s')} |", flush=True)
    finally:
        teardown()


if __name__ == "__main__":
    main()
