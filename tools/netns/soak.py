#!/usr/bin/env python3
"""Soak: a serving receiver (`cmtlab recv --dir`, default options) left running under a
mix of honest senders, stalled and silent associations and spoofed INIT floods, in two
private network namespaces joined by two tbf-shaped veth pairs (20 and 10 Mbit/s).

    sudo tools/netns/soak.py [--minutes 60] [--seed 1]      (root; iproute2; a release build)

The mix, all at once for the whole run (seeded, so two runs with one seed start the
same processes at the same offsets):
  honest    a sender every 2-6 s, 0.1-8 MB of random bytes under a unique name; its
            stored file must be byte-identical, or its exit must be non-zero with a reason
  stalled   every 30 s a sender is stopped (SIGSTOP) 1 s into its transfer and never
            continued: a silent association the server must shed, then killed at 5 min
  slow      every 45 s a sender is stopped and continued in turns (0.5 s on, 4 s off):
            it moves data slower than the server's floor and may be shed under pressure
  flood     spoofed INITs from random 10.9.0.0/16 sources at 300 per second in bursts
            of 20 s every minute (raw IPv4 / UDP / SCTP packets)

Every 10 s the server's resident memory (VmRSS), open descriptors and transfers in
progress are sampled; at the end the server is left idle for --settle seconds (past its
outage tolerance, so the stopped senders' associations end) and sampled once more.
Prints a summary: honest transfers started, stored whole, refused or failed with a
reason, wrong (stored with different bytes: must be 0), lost (exit 0 but no file:
must be 0), the memory at 1 min, its maximum and at the end, the descriptors likewise.
"""
import argparse, hashlib, os, random, signal, socket, struct, subprocess, sys, threading, time

import failover
from failover import BIN

S, R = "cmtsoS", "cmtsoR"
PORT = 9899
REMOTE = f"10.1.0.2:{PORT},10.2.0.2:{PORT}"


def setup():
    """The failover benchmark's two namespaces and shaped veth pairs, under our names."""
    failover.S, failover.R = S, R
    failover.setup()


def teardown():
    failover.S, failover.R = S, R
    failover.teardown()


def crc32c(data):
    """CRC32c (Castagnoli), as SCTP's checksum (RFC 9260 Appendix B)."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 & -(crc & 1))
    return crc ^ 0xFFFFFFFF


def spoofed_init(rng):
    """An IPv4 / UDP / SCTP INIT from a random 10.9.0.0/16 source to the server."""
    src = bytes([10, 9, rng.randrange(256), rng.randrange(1, 255)])
    sport = rng.randrange(1024, 65535)
    init = struct.pack("!BBHIIHHI", 1, 0, 20, rng.getrandbits(32) | 1, 65536, 10, 10, rng.getrandbits(32))
    common = struct.pack("!HHII", sport, PORT, 0, 0) + init
    crc = crc32c(common)
    sctp = common[:8] + struct.pack("<I", crc) + common[12:]
    udp = struct.pack("!HHHH", sport, PORT, 8 + len(sctp), 0) + sctp
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, src, bytes([10, 1, 0, 2]))
    return ip + udp


def flood(stop, per_s, seed):
    """Runs in the sender's namespace (a child process): spoofed INITs at `per_s`."""
    rng = random.Random(seed)
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    gap = 1.0 / per_s
    t = time.monotonic()
    while time.time() < stop:
        try:
            s.sendto(spoofed_init(rng), ("10.1.0.2", 0))
        except OSError:
            pass
        t += gap
        time.sleep(max(0.0, t - time.monotonic()))


def sender(path, name, extra=()):
    return subprocess.Popen(["ip", "netns", "exec", S, BIN, "send", "--local", "10.1.0.1:0,10.2.0.1:0",
                             "--remote", REMOTE, "--name", name, "--timeout", "900", *extra, path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def sample(pid, store):
    """(RSS in KiB, open descriptors, transfers in progress: the store's temporary files)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            rss = next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        parts = sum(1 for n in os.listdir(store) if n.startswith("."))
        return rss, fds, parts
    except (OSError, StopIteration):
        return None


def server_pid(wrapper):
    """The cmtlab process under `ip netns exec` (exec replaces it: the same pid)."""
    return wrapper.pid


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "flood":
        return flood(float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    ap = argparse.ArgumentParser()
    ap.add_argument("--minutes", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--settle", type=float, default=330,
                    help="seconds the server is left idle at the end (past its 300 s outage tolerance)")
    a = ap.parse_args()
    if not os.access(BIN, os.X_OK):
        sys.exit(f"build first: cargo build --release ({BIN})")
    rng = random.Random(a.seed)
    work = f"/tmp/cmtlab-soak-{os.getpid()}"
    store, src = os.path.join(work, "store"), os.path.join(work, "src")
    os.makedirs(store)
    os.makedirs(src)
    setup()
    server = None
    try:
        server = subprocess.Popen(["ip", "netns", "exec", R, BIN, "recv", "--listen", REMOTE, "--dir", store,
                                   "--log", os.path.join(work, "log.jsonl")],
                                  stdout=subprocess.DEVNULL, stderr=open(os.path.join(work, "server.err"), "w"))
        time.sleep(0.5)
        run(a, rng, server, store, src)
    finally:
        if server:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
        teardown()
        print(f"work directory: {work}")


def run(a, rng, server, store, src):
    start = time.monotonic()
    end = start + a.minutes * 60
    honest, stalled, slow, floods, samples = [], [], [], [], []
    next_honest = start + 1
    next_stall, next_slow, next_flood, next_sample = start + 15, start + 20, start + 30, start
    n = 0
    while time.monotonic() < end:
        now = time.monotonic()
        if now >= next_honest:
            n += 1
            size = rng.randrange(100_000, 8_000_000)
            path = os.path.join(src, f"h{n}.bin")
            with open(path, "wb") as f:
                f.write(rng.randbytes(size))
            honest.append((f"h{n}.bin", path, sender(path, f"h{n}.bin")))
            next_honest = now + rng.uniform(2, 6)
        if now >= next_stall:
            n += 1
            path = os.path.join(src, f"s{n}.bin")
            with open(path, "wb") as f:
                f.write(rng.randbytes(20_000_000))
            p = sender(path, f"s{n}.bin")
            stalled.append((now, p))
            threading.Timer(1.0, lambda p=p: p.poll() is None and p.send_signal(signal.SIGSTOP)).start()
            next_stall = now + 30
        if now >= next_slow:
            n += 1
            path = os.path.join(src, f"w{n}.bin")
            with open(path, "wb") as f:
                f.write(rng.randbytes(20_000_000))
            slow.append((now, sender(path, f"w{n}.bin")))
            next_slow = now + 45
        if now >= next_flood:
            stop = time.time() + 20
            floods.append(subprocess.Popen(["ip", "netns", "exec", S, sys.executable, __file__, "flood",
                                            str(stop), "300", str(rng.getrandbits(32))]))
            next_flood = now + 60
        if now >= next_sample:
            samples.append((now - start, sample(server_pid(server), store)))
            next_sample = now + 10
        # The slow ones: on for 0.5 s in every 4.5 s.
        phase = (now - start) % 4.5
        for _, p in slow:
            if p.poll() is None:
                p.send_signal(signal.SIGCONT if phase < 0.5 else signal.SIGSTOP)
        for t0, p in stalled:
            if p.poll() is None and now - t0 > 300:
                p.kill()
        if server.poll() is not None:
            print(f"**the server exited** ({server.returncode}) after {now - start:.0f} s")
            break
        time.sleep(0.1)
    for _, p in slow + stalled:
        if p.poll() is None:
            p.send_signal(signal.SIGCONT)
            p.kill()
    for _, _, p in honest:
        try:
            p.wait(timeout=900)
        except subprocess.TimeoutExpired:
            p.kill()
    samples.append((time.monotonic() - start, sample(server_pid(server), store)))
    # Left idle: every association still held (the stopped senders') must end within
    # the outage tolerance, and what it held must go with it.
    time.sleep(a.settle)
    settled = sample(server_pid(server), store)
    report(a, honest, stalled, slow, floods, samples, store, settled)


def sha(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def report(a, honest, stalled, slow, floods, samples, store, settled):
    whole = wrong = lost = failed = 0
    reasons = {}
    for name, path, p in honest:
        stored = os.path.join(store, name)
        if p.returncode == 0:
            if not os.path.exists(stored):
                lost += 1
            elif sha(stored) == sha(path):
                whole += 1
            else:
                wrong += 1
        else:
            failed += 1
            err = (p.stderr.read() or "").strip().splitlines()
            key = err[-1][:90] if err else f"exit {p.returncode}, no message"
            reasons[key] = reasons.get(key, 0) + 1
            if os.path.exists(stored) and sha(stored) != sha(path):
                wrong += 1
    mem = [(t, s) for t, s in samples if s]
    at = lambda t0: min(mem, key=lambda x: abs(x[0] - t0))[1] if mem else (0, 0)
    print(f"soak: {a.minutes:g} min, seed {a.seed}: {len(honest)} honest senders, {len(stalled)} stalled, "
          f"{len(slow)} slow, {len(floods)} floods of 20 s at 300 spoofed INITs/s")
    print(f"honest: {whole} stored whole, {failed} failed with a reason, wrong {wrong}, lost {lost}")
    for k, v in sorted(reasons.items(), key=lambda x: -x[1]):
        print(f"  {v} × {k}")
    if mem:
        rss = [s[0] for _, s in mem]
        fds = [s[1] for _, s in mem]
        print(f"server RSS: {at(60)[0] / 1024:.1f} MiB at 1 min, max {max(rss) / 1024:.1f} MiB, "
              f"{rss[-1] / 1024:.1f} MiB at the end; open descriptors {at(60)[1]} at 1 min, max {max(fds)}, "
              f"{fds[-1]} at the end")
        print("  minute   RSS MiB   descriptors   transfers in progress")
        step = 10 if a.minutes >= 20 else 2 if a.minutes >= 4 else 1
        for m in range(step, int(a.minutes) + 1, step):
            t, (r, d, n) = min(mem, key=lambda x: abs(x[0] - m * 60))
            print(f"  {t / 60:6.1f}   {r / 1024:7.1f}   {d:11}   {n:21}")
    if settled:
        r, d, n = settled
        print(f"left idle {a.settle:g} s after the last sender: RSS {r / 1024:.1f} MiB, "
              f"{d} open descriptors, {n} transfers in progress")
    sys.exit(0 if wrong == 0 and lost == 0 else 1)


if __name__ == "__main__":
    main()
