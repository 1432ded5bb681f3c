#!/usr/bin/env bash
# Two rate-limited paths between two network namespaces (veth pairs shaped with tbf;
# this kernel has no netem, so no delay or loss here), then the same file moved by
# cmtlab (SCTP over UDP, CMT) and by Linux kernel MPTCP (socket protocol 262) over them.
# Needs root. Usage: tools/netns/bench.sh [RATE1] [RATE2] [MB]   (defaults 50mbit 20mbit 40)
set -euo pipefail
R1=${1:-50mbit}; R2=${2:-20mbit}; MB=${3:-40}
BIN=${CMTLAB:-$(dirname "$0")/../../target/release/cmtlab}
[ -x "$BIN" ] || { echo "build first: cargo build --release" >&2; exit 2; }
S=cmtS; R=cmtR
cleanup() { ip netns del $S 2>/dev/null || true; ip netns del $R 2>/dev/null || true; }
trap cleanup EXIT
cleanup
ip netns add $S; ip netns add $R
for i in 1 2; do
  ip link add s$i netns $S type veth peer name r$i netns $R
  ip -n $S addr add 10.$i.0.1/24 dev s$i; ip -n $R addr add 10.$i.0.2/24 dev r$i
  ip -n $S link set s$i up; ip -n $R link set r$i up
done
ip -n $S link set lo up; ip -n $R link set lo up
# Shape both directions of each path.
for i in 1 2; do
  rate=$([ $i = 1 ] && echo $R1 || echo $R2)
  ip netns exec $S tc qdisc add dev s$i root tbf rate $rate burst 32kbit latency 50ms
  ip netns exec $R tc qdisc add dev r$i root tbf rate $rate burst 32kbit latency 50ms
done
head -c $((MB * 1000000)) /dev/urandom > /tmp/netns-bench.bin
echo "== cmtlab, two paths ($R1 + $R2), ${MB} MB"
for sched in round-robin minrtt; do
  ip netns exec $R "$BIN" recv --listen 10.1.0.2:9899,10.2.0.2:9899 --out /tmp/netns-bench.out > /tmp/netns-recv.log &
  sleep 0.5
  ip netns exec $S "$BIN" send --local 10.1.0.1:0,10.2.0.1:0 --remote 10.1.0.2:9899,10.2.0.2:9899 \
    --scheduler $sched /tmp/netns-bench.bin | grep -E "sent:|path [0-9]" | sed "s/^/  $sched: /"
  wait
done
echo "== Linux kernel MPTCP (protocol 262), subflows over both paths"
ip netns exec $S sysctl -q net.mptcp.enabled=1; ip netns exec $R sysctl -q net.mptcp.enabled=1
ip -n $S mptcp limits set subflows 2 add_addr_accepted 2
ip -n $R mptcp limits set subflows 2 add_addr_accepted 2
ip -n $S mptcp endpoint add 10.2.0.1 dev s2 subflow
ip -n $R mptcp endpoint add 10.2.0.2 dev r2 signal
ip netns exec $R python3 "$(dirname "$0")/mptcp.py" recv 10.1.0.2 5201 > /tmp/netns-mptcp-recv.log &
sleep 0.5
# CUBIC, Linux's default, whatever this host's sysctl says (KERNEL_CC to change it).
ip netns exec $S python3 "$(dirname "$0")/mptcp.py" send 10.1.0.2 5201 /tmp/netns-bench.bin \
  "${KERNEL_CC:-cubic}" | sed "s/^/  /"
wait
cat /tmp/netns-mptcp-recv.log | sed "s/^/  /"
