#!/usr/bin/env python3
"""A minimal Linux kernel MPTCP sender/receiver (socket protocol 262) for the
side-by-side benchmark: `mptcp.py recv ADDR PORT [OUT]` / `mptcp.py send ADDR PORT FILE [CC]`
(with OUT, the receiver also writes what it reads to that file as it reads it; with CC,
the sender's congestion control, e.g. `cubic`, whatever the system's default — a host's
`net.ipv4.tcp_congestion_control` is inherited by every namespace and may be `bbr`)."""
import socket, sys, time, hashlib

IPPROTO_MPTCP = 262

def main():
    mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "recv":
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((addr, port)); s.listen(1)
        c, _ = s.accept()
        out = open(sys.argv[4], "wb", buffering=0) if len(sys.argv) > 4 else None
        h, n, t0 = hashlib.sha256(), 0, None
        while True:
            b = c.recv(1 << 20)
            if not b:
                break
            t0 = t0 or time.time()
            h.update(b); n += len(b)
            if out:
                out.write(b)
        dt = time.time() - t0
        print(f"mptcp received: {n} bytes in {dt:.3f} s = {n*8/dt/1e6:.3f} Mbit/s, sha256 {h.hexdigest()}")
    else:
        data = open(sys.argv[4], "rb").read()
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM, IPPROTO_MPTCP)
        if len(sys.argv) > 5:
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, sys.argv[5].encode())
        s.connect((addr, port))
        t0 = time.time(); s.sendall(data); s.shutdown(socket.SHUT_WR)
        s.recv(1)
        dt = time.time() - t0
        print(f"mptcp sent: {len(data)} bytes in {dt:.3f} s = {len(data)*8/dt/1e6:.3f} Mbit/s")

if __name__ == "__main__":
    main()
