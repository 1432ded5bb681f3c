#!/usr/bin/env bash
# Cross-checks cmtlab against ns-2.35's SCTP CMT module on the same scenarios.
# Needs `ns` (apt-get install ns2) and `cargo build --release`. Usage:
#   tools/ns2/compare.sh [SEEDS]      (default 8)
# Part 1: loss-free two-path cases (deterministic in both simulators).
# Part 2: the demo (seed 000 Table 1) with cmtlab's seed-1 draws pinned, SEEDS seeds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cmtlab="$root/target/release/cmtlab"
n=${1:-8}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

two="$work/two.toml"
cat > "$two" <<'TOML'
seed = 1
duration = "60s"
[[links]]
name = "a"
rate = "10Mbps"
[[links]]
name = "b"
rate = "2Mbps"
[[paths]]
name = "a"
links = ["a"]
[[paths]]
name = "b"
links = ["b"]
TOML
echo "## loss-free two-path: rate1 delay1 rate2 delay2 rbuf queue duration"
for cfg in "10Mb 10 2Mb 10 4194304 100 60" "10Mb 10 2Mb 10 65536 50 60" "10Mb 10 1Mb 100 65536 50 60" "5Mb 5 5Mb 50 131072 100 30"; do
  set -- $cfg
  (cd "$work" && timeout 120 ns "$here/twopath.tcl" $cfg >/dev/null 2>&1)
  g=$(python3 "$here/twopath.py" "$work/trace.tr" | awk '{print $2}')
  args=(--set "links.a.rate=\"${1}ps\"" --set "links.a.delay=\"${2}ms\"" --set "links.b.rate=\"${3}ps\""
        --set "links.b.delay=\"${4}ms\"" --set "receiver.rbuf=$5" --set "links.a.queue=$6" --set "links.b.queue=$6"
        --set "duration=\"${7}s\"")
  r=$("$cmtlab" run "$two" "${args[@]}" | awk '/^  goodput/ {print $2}')
  m=$("$cmtlab" run "$two" "${args[@]}" --set association.max_burst_mode=ns2 | awk '/^  goodput/ {print $2}')
  echo "$cfg: ns2=$g cmtlab_rfc=$r cmtlab_ns2mode=$m"
done

echo "## demo (seed 000 Table 1), draws pinned to cmtlab seed 1; Mbit/s"
D=(11.37 11.67 18.66); L=(0.01151 0.01724 0.05922)
fix=(--set "links.wifi-access.delay=\"${D[0]}ms\"" --set "links.wimax-access.delay=\"${D[1]}ms\""
     --set "links.wlan-access.delay=\"${D[2]}ms\"" --set "links.wifi-access.loss=${L[0]}"
     --set "links.wimax-access.loss=${L[1]}" --set "links.wlan-access.loss=${L[2]}")
nog=(--set links.wifi-access.gilbert=none --set links.wimax-access.gilbert=none --set links.wlan-access.gilbert=none)
for markov in 0 1; do
  for seed in $(seq 1 "$n"); do
    # ns-2.35's SCTP code can spin forever on some seeds; give it 60 s of wall time.
    if (cd "$work" && /usr/bin/time -f "%e" -o time.txt timeout 60 ns "$here/demo.tcl" "$seed" "$markov" "${D[@]}" "${L[@]}" >/dev/null 2>&1); then
      g=$(python3 "$here/summarize.py" "$work/trace.tr" | awk '/^goodput/ {print $2}'); w=$(cat "$work/time.txt")
    else
      g=hung; w=timeout
    fi
    extra=(); [ "$markov" = 0 ] && extra=("${nog[@]}")
    r=$("$cmtlab" run "$root/scenarios/demo.toml" --set seed="$seed" "${fix[@]}" "${extra[@]}" | awk '/^  goodput/ {print $2}')
    m=$("$cmtlab" run "$root/scenarios/demo.toml" --set seed="$seed" "${fix[@]}" "${extra[@]}" --set association.max_burst_mode=ns2 --out "$work/c" | awk '/^  goodput/ {print $2}')
    cw=$(python3 -c "import json;print(round(json.load(open('$work/c/summary.json'))['wall_s'], 4))")
    echo "markov=$markov seed=$seed ns2=$g ns2_wall_s=$w cmtlab_rfc=$r cmtlab_ns2mode=$m cmtlab_wall_s=$cw"
  done
done
