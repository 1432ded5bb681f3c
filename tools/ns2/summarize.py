#!/usr/bin/env python3
"""Summarise an ns-2 trace of tools/ns2/demo.tcl (written with show_sctphdr_ 1: fields
ev t from to sctp size flags fid src dst nchunks tsn uid sid ssn): goodput from distinct
DATA TSNs that reached the receiver, per-path DATA packets sent and dropped.
Usage: summarize.py trace.tr"""
import sys

SENDER_IF = {2: 0, 5: 1, 8: 2}    # sender interface node -> path
RECEIVER_IF = {3: 0, 6: 1, 9: 2}  # receiver interface node -> path
seen, first, last_t = set(), None, 0.0
sent = [0, 0, 0]
drops = [0, 0, 0]
for line in open(sys.argv[1]):
    f = line.split()
    ev, t, a, b, kind, size = f[0], float(f[1]), int(f[2]), int(f[3]), f[4], int(f[5])
    last_t = t
    if kind != "sctp" or size < 1000:  # DATA packets are 1500 B; SACK/HB/INIT are small
        continue
    tsn, uid = int(f[11]), int(f[12])
    if ev == "+" and a in SENDER_IF:
        sent[SENDER_IF[a]] += 1
        first = t if first is None else first
    elif ev == "d":  # DATA only travels forward; nodes 2-4, 5-7, 8-10 are paths 1-3
        drops[(a - 2) // 3] += 1
    elif ev == "r" and b in RECEIVER_IF:
        seen.add(tsn)
dur = last_t - first
print(f"first DATA at {first:.3f} s, measured over {dur:.3f} s")
print(f"goodput {len(seen) * 1452 * 8 / dur / 1e6:.3f} Mbit/s (distinct TSNs {len(seen)})")
for i in range(3):
    print(f"path {i + 1}: sent {sent[i]} lost {drops[i]} ({100 * drops[i] / max(sent[i], 1):.2f} %)")
