#!/usr/bin/env python3
"""Goodput (distinct DATA TSNs at the receiver, from the first DATA send) of a
tools/ns2/twopath.tcl trace. Nodes: 2/3 = path 1 sender/receiver side, 4/5 = path 2."""
import sys
seen, first, last = set(), None, 0.0
per = [0, 0]
for line in open(sys.argv[1]):
    f = line.split()
    t, a, b, size = float(f[1]), int(f[2]), int(f[3]), int(f[5])
    last = t
    if f[4] != "sctp" or size < 1000:
        continue
    if f[0] == "+" and a in (2, 4) and first is None:
        first = t
    if f[0] == "r" and b in (3, 5) and int(f[11]) not in seen:
        seen.add(int(f[11]))
        per[(b - 3) // 2] += 1
dur = last - first
print(f"goodput {len(seen) * 1452 * 8 / dur / 1e6:.3f} Mbit/s  path1 {per[0] * 1452 * 8 / dur / 1e6:.3f}  path2 {per[1] * 1452 * 8 / dur / 1e6:.3f}  (from {first:.2f} s)")
