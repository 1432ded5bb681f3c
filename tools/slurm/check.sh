#!/usr/bin/env bash
# Checks docs/slurm.md on a real single-node Slurm: installs slurm-wlm and munge from
# Debian when missing, starts munged, slurmctld and slurmd on this machine, then runs
# the documented recipe *as written in docs/slurm.md* (its sbatch scripts are extracted
# from the document, with 4 shards instead of 32): the job array, the dependent merge,
# and a re-submission of one shard after its results were removed. The merged output
# must equal an unsharded `cmtlab sweep` byte for byte.
#
# Usage: tools/slurm/check.sh [CMTLAB_BINARY]   (default: target/debug/cmtlab)
# Needs root (it configures and starts the Slurm daemons); says so and exits 0 without.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
bin=$(realpath "${1:-target/debug/cmtlab}")
limit=600 # seconds any wait may take

say() { echo "slurm check: $*"; }
fail() { say "FAILED: $*"; exit 1; }

if [ "$(id -u)" != 0 ]; then
  say "skipped: needs root to configure and start Slurm"
  exit 0
fi
[ -x "$bin" ] || fail "no cmtlab binary at $bin (cargo build first)"

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  say "installing slurm-wlm and munge (Debian)"
  if ! (DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge) >/dev/null 2>&1; then
    say "skipped: slurm-wlm and munge could not be installed"
    exit 0
  fi
fi

host=$(hostname)
if ! sinfo -h >/dev/null 2>&1; then
  say "configuring a single-node cluster on $host"
  mkdir -p /etc/slurm /var/spool/slurmd /var/spool/slurmctld /etc/munge /var/log/munge /run/munge
  cat > /etc/slurm/slurm.conf <<EOF
ClusterName=cmtlab-check
SlurmctldHost=$host
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/spool/slurmd
StateSaveLocation=/var/spool/slurmctld
SlurmUser=root
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
NodeName=$host CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=check Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  [ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
  chown -R munge:munge /etc/munge /var/log/munge /run/munge
  chmod 400 /etc/munge/munge.key
  pgrep -x munged >/dev/null || runuser -u munge -- munged
  pgrep -x slurmctld >/dev/null || slurmctld
  pgrep -x slurmd >/dev/null || slurmd
  for _ in $(seq 30); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 1; done
fi
sinfo -h -o %T | grep -q -E "idle|mix|alloc" || fail "the node did not come up: $(sinfo 2>&1)"

work=$(mktemp -d /tmp/cmtlab-slurm.XXXXXX)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir -p bin
ln -s "$bin" bin/cmtlab
cp -r "$repo/scenarios" .
export PATH="$work/bin:$PATH"

# The two sbatch scripts, as the document has them (first two ```bash blocks), with
# 4 shards.
awk '/^```bash$/{n++; f=(n<=2); if(f) file=(n==1?"sweep.sbatch":"merge.sbatch"); next}
     /^```$/{f=0; next} f{print > file}' "$repo/docs/slurm.md"
[ -s sweep.sbatch ] && [ -s merge.sbatch ] || fail "could not extract the scripts from docs/slurm.md"
sed -i -e 's/^#SBATCH --array=0-31$/#SBATCH --array=0-3/' -e 's/^N=32 /N=4 /' \
  -e 's/^#SBATCH --cpus-per-task=4$/#SBATCH --cpus-per-task=1/' sweep.sbatch
grep -q -- '--array=0-3' sweep.sbatch && grep -q '^N=4 ' sweep.sbatch ||
  fail "docs/slurm.md's sweep script no longer has --array=0-31 and N=32"

# Waits until job $1 has left the queue; fails past the limit.
wait_job() {
  for _ in $(seq "$limit"); do
    squeue -h -j "$1" 2>/dev/null | grep -q . || return 0
    sleep 1
  done
  scancel "$1" || true
  fail "job $1 still queued after $limit s: $(squeue 2>&1)"
}

# Submits the array (sbatch options "$@") and the dependent merge as documented, waits
# for both, and checks that the merge wrote its output.
array_then_merge() {
  local jid mid
  jid=$(sbatch --parsable "$@" sweep.sbatch)
  mid=$(sbatch --parsable --dependency=afterok:${jid} --kill-on-invalid-dep=yes merge.sbatch)
  wait_job "$jid"
  wait_job "$mid"
  [ -f results/demo-rbuf/all/aggregate.csv ] ||
    fail "no merged output; logs: $(tail -n 5 logs/* 2>/dev/null)"
}

say "submitting the array and the merge as documented"
mkdir -p logs
array_then_merge

say "re-submitting one shard after removing its results, as documented"
rm -rf results/demo-rbuf/shard-2 results/demo-rbuf/all
array_then_merge --array=2

say "comparing with an unsharded sweep"
cmtlab sweep scenarios/studies/demo/rbuf.toml --jobs 2 --out unsharded >/dev/null
for f in results.csv aggregate.csv runs.jsonl; do
  cmp "unsharded/$f" "results/demo-rbuf/all/$f" || fail "$f differs from the unsharded sweep"
done
say "ok: array + dependent merge + re-submitted shard on Slurm $(sinfo -V | cut -d' ' -f2) equal the unsharded sweep"
