#!/usr/bin/env bash
# Runs the demo topology in ns-2.35 and in cmtlab with the same fixed delays and loss
# rates, for seeds 1..N, with and without the 1 % Markov loss. Needs `ns` (apt-get
# install ns2) and a release build of cmtlab. Usage: tools/ns2/compare.sh [N]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
n=${1:-5}
D=(11.37 11.67 18.66); L=(0.01151 0.01724 0.05922)
fix=(--set "links.wifi-access.delay=\"${D[0]}ms\"" --set "links.wimax-access.delay=\"${D[1]}ms\""
     --set "links.wlan-access.delay=\"${D[2]}ms\"" --set "links.wifi-access.loss=${L[0]}"
     --set "links.wimax-access.loss=${L[1]}" --set "links.wlan-access.loss=${L[2]}")
nog=(--set links.wifi-access.gilbert=none --set links.wimax-access.gilbert=none --set links.wlan-access.gilbert=none)
work=$(mktemp -d)
for markov in 0 1; do
  for seed in $(seq 1 "$n"); do
    # ns-2.35's SCTP code can spin forever on some seeds; give it 60 s of wall time.
    if (cd "$work" && /usr/bin/time -f "%e" -o time.txt timeout 60 ns "$here/demo.tcl" "$seed" "$markov" "${D[@]}" "${L[@]}" >/dev/null 2>&1); then
      g=$(python3 "$here/summarize.py" "$work/trace.tr" | awk '/^goodput/ {print $2}')
    else
      g=hung; echo "timeout" > "$work/time.txt"
    fi
    extra=(); [ "$markov" = 0 ] && extra=("${nog[@]}")
    c=$("$root/target/release/cmtlab" run "$root/scenarios/demo.toml" --set seed="$seed" "${fix[@]}" "${extra[@]}" --out "$work/c")
    cg=$(echo "$c" | awk '/^  goodput/ {print $2}')
    cw=$(python3 -c "import json;print(json.load(open('$work/c/summary.json'))['wall_s'])")
    echo "markov=$markov seed=$seed ns2_goodput=$g ns2_wall_s=$(cat "$work/time.txt") cmtlab_goodput=$cg cmtlab_wall_s=$cw"
  done
done
rm -rf "$work"
