#!/usr/bin/env bash
# CPU time of ns-2.35 (untraced) and cmtlab on the same cases. Each case is simulated
# for as long as ns-2 keeps delivering: ns-2.35's 16-bit stream sequence numbers stop
# ordered delivery for good when they wrap while chunks are held out of order (see
# docs/ns2.md), so no case may deliver 65536 chunks.
# Needs `ns` and `cargo build --release`. Usage: tools/ns2/speed.sh [REPEATS]   (default 3)
# Prints, per case, user+system CPU seconds per run of each simulator: the lowest over
# REPEATS batches of 10 runs each (the machine is shared; the minimum is the least
# disturbed batch; batches get past the 10 ms resolution of the counters).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cmtlab="${CMTLAB:-$root/target/release/cmtlab}"
reps=${1:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# id | seconds | rbuf | rtx | paths (RATE_BPS:DELAY_MS:LOSS:QUEUE ...)
cases=(
  "10+1M, 1 MB|60|1048576|4|10000000:10:0:50 1000000:100:0:50"
  "10+2M, 4 MB|50|4194304|4|10000000:10:0:100 2000000:10:0:100"
  "1 path 10M/50 ms, 1 % loss|300|1048576|4|10000000:50:0.01:100"
  "5+5M, 32 KB|60|32768|4|5000000:10:0:50 5000000:10:0:50"
)

cpu() { # command... -> user+sys seconds per run, fastest batch of 10 of $reps
  local best=""
  for _ in $(seq "$reps"); do
    /usr/bin/time -f "%U %S" -o "$work/t" bash -c 'for i in 1 2 3 4 5 6 7 8 9 10; do "$@" >/dev/null 2>&1; done' _ "$@"
    local t
    t=$(awk '{printf "%.4f", ($1 + $2) / 10}' "$work/t")
    if [ -z "$best" ] || awk "BEGIN {exit !($t < $best)}"; then best=$t; fi
  done
  echo "$best"
}

printf "| case | simulated | ns-2.35 CPU s | cmtlab CPU s | ns-2 / cmtlab |\n|---|---|---|---|---|\n"
for c in "${cases[@]}"; do
  IFS='|' read -r id secs rbuf rtx paths <<<"$c"
  nsargs=(seed=1000003 "stop=$secs" "rbuf=$rbuf" "rtx=$rtx" trace=none agent=none)
  toml="$work/c.toml"
  {
    echo 'seed = 1'; echo "duration = \"${secs}s\""
    echo '[association]'; echo 'compat = "ns2"'
    echo '[receiver]'; echo "rbuf = $rbuf"
  } >"$toml"
  i=0
  for p in $paths; do
    nsargs+=("path=$p")
    IFS=: read -r rate delay loss queue <<<"$p"
    {
      echo '[[links]]'; echo "name = \"p$i\""; echo "rate = \"${rate}bps\""
      echo "delay = \"${delay}ms\""; echo "queue = $((queue - 1))"; echo "loss = $loss"
      echo 'loss_direction = "forward"'
    } >>"$toml"
    i=$((i + 1))
  done
  for j in $(seq 0 $((i - 1))); do
    { echo '[[paths]]'; echo "name = \"p$j\""; echo "links = [\"p$j\"]"; } >>"$toml"
  done
  t_ns=$(cd "$work" && cpu ns "$here/case.tcl" "${nsargs[@]}")
  t_cm=$(cpu "$cmtlab" run "$toml")
  printf "| %s | %s s | %s | %s | %.1f× |\n" "$id" "$secs" "$t_ns" "$t_cm" "$(awk "BEGIN {print $t_ns / $t_cm}")"
done
