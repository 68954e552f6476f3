#!/usr/bin/env bash
# scripts/slurm/mecha-array.sbatch on a real Slurm: a one-node cluster (munged, slurmctld,
# slurmd from Debian's slurm-wlm and munge) made in a temp folder, on loopback ports, with its
# own munge key and socket; nothing of the host's /etc/slurm or /run/munge is used. Submits a
# 4-shard array over 20 tasks on a cassette model and checks that results.jsonl has every id
# once, completed, and that each array task ran its own shard; then submits the array again
# and checks that it added nothing (a rerun resumes). About 25 s. Exits 77 (CTest's skip) with one line when Slurm or munge is missing or the
# cluster does not come up (the daemons' last log lines then go to stderr).
#
#   tests/slurm/run_slurm_test.sh MECHA_BIN OUTDIR
set -euo pipefail
if [ -n "${MECHA_SANITIZER_BUILD:-}" ]; then
  echo "SKIP: slurm array test: not run in the sanitizer build (make test runs it)"
  exit 77
fi
if [ $# -ne 2 ]; then
  echo "usage: $0 MECHA_BIN OUTDIR" >&2
  exit 2
fi
mecha=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
start=$SECONDS

for bin in munged slurmctld slurmd sbatch sinfo; do
  if ! command -v "$bin" >/dev/null 2>&1 && [ ! -x "/usr/sbin/$bin" ]; then
    echo "SKIP: slurm array test: $bin is not installed (apt-get install slurm-wlm munge)"
    exit 77
  fi
done
PATH=$PATH:/usr/sbin

tmp=$(mktemp -d /tmp/mecha-slurm.XXXXXX)
pids=()
submitted=
waiting=
cleanup() {
  local p k
  # An `sbatch --wait` still waiting (the test was interrupted) would poll the stopped
  # controller until its timeout: stop it (timeout passes the signal on to sbatch).
  if [ -n "$waiting" ]; then
    kill "$waiting" 2>/dev/null || true
    wait "$waiting" 2>/dev/null || true
  fi
  # A job still running (sbatch timed out) has slurmstepd and mecha processes that outlive
  # slurmd: cancel it and let them go first.
  if [ -n "$submitted" ]; then
    timeout 5 scancel --quiet --user="$(id -un)" 2>/dev/null || true
    for _ in $(seq 50); do
      [ -z "$(timeout 2 squeue -h 2>/dev/null || true)" ] && break
      sleep 0.1
    done
  fi
  # Newest first (slurmd, slurmctld, munged): each may still need the one before it to stop.
  for ((k = ${#pids[@]} - 1; k >= 0; k--)); do
    p=${pids[k]}
    kill "$p" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  rm -rf "$tmp"
}
trap cleanup EXIT

# Prints one skip line, the daemons' last log lines on stderr, and exits 77.
skip() {
  echo "SKIP: slurm array test: $1"
  local f
  # A daemon's stderr only when its log file is empty (it failed before opening it).
  for f in "$tmp"/log/*.log; do
    [ -s "$f" ] || continue
    case $f in *.stderr.log) [ -s "${f%.stderr.log}.log" ] && continue ;; esac
    echo "--- $f" >&2
    tail -n 10 "$f" >&2
  done
  exit 77
}

# Free loopback ports, picked by the kernel.
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

mkdir -p "$tmp/munge" "$tmp/log" "$tmp/state" "$tmp/spool" "$tmp/run" "$tmp/work"
chmod 755 "$tmp/munge"

# munged: its own key, socket, pid, log and seed files. --force: where munged's checks of who
# may write to those folders would refuse one (a /tmp mounted oddly), it only warns.
if command -v mungekey >/dev/null 2>&1; then
  mungekey --create --keyfile="$tmp/munge/munge.key" --force
else
  dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
fi
chmod 400 "$tmp/munge/munge.key"
socket=$tmp/munge/munge.socket
munged --foreground --force --key-file="$tmp/munge/munge.key" --socket="$socket" \
  --pid-file="$tmp/munge/munged.pid" --log-file="$tmp/log/munged.log" \
  --seed-file="$tmp/munge/munged.seed" 2>>"$tmp/log/munged.log" &
pids+=($!)
for _ in $(seq 50); do [ -S "$socket" ] && break; sleep 0.1; done
[ -S "$socket" ] || skip "munged did not start (see its log below)"

host=$(hostname -s)
user=$(id -un)
cpus=$(nproc)
ctld_port=$(free_port)
slurmd_port=$(free_port)
while [ "$slurmd_port" = "$ctld_port" ]; do slurmd_port=$(free_port); done
: >"$tmp/plugstack.conf"
export SLURM_CONF=$tmp/slurm.conf
# AuthInfo/socket points both the auth and the credential plugin at our munged.
cat >"$SLURM_CONF" <<EOF
ClusterName=mechatest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
PlugStackConfig=$tmp/plugstack.conf
MailProg=/bin/true
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/run/slurmctld.pid
SlurmdPidFile=$tmp/run/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
SchedulerType=sched/backfill
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

# -i: ignore any state (there is none; a fresh cluster).
slurmctld -D -i >>"$tmp/log/slurmctld.stderr.log" 2>&1 &
pids+=($!)
slurmd -D -N "$host" >>"$tmp/log/slurmd.stderr.log" 2>&1 &
pids+=($!)

state=
deadline=$((SECONDS + 30))
while [ "$SECONDS" -lt "$deadline" ]; do
  state=$(timeout 5 sinfo -h -o %t 2>/dev/null || true)
  [ "$state" = idle ] && break
  for p in "${pids[@]}"; do
    kill -0 "$p" 2>/dev/null || skip "a Slurm or munge daemon exited (see its log below)"
  done
  sleep 0.5
done
[ "$state" = idle ] || skip "the one-node cluster did not come up in 30 s (sinfo: '${state:-no answer}')"
up=$((SECONDS - start))

# 20 tasks, each copying a small folder, on a cassette that answers at once.
mkdir -p "$tmp/work/proj"
echo "hello" >"$tmp/work/proj/a.txt"
printf '%s\n' '{"mecha_cassette": 1}' \
  '{"response": {"content": [{"type": "text", "text": "done"}], "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 1}}}' \
  >"$tmp/work/cassette.jsonl"
for k in $(seq 0 19); do
  printf '{"id": "t%d", "prompt": "p", "dir": "%s"}\n' "$k" "$tmp/work/proj"
done >"$tmp/work/tasks.jsonl"

rm -rf "$out"
mkdir -p "$out"
export TASKS=$tmp/work/tasks.jsonl
export OUT=$out/batch
export MECHA=$mecha
# No --store: each shard records its sessions in $OUT/sessions-K.db, checked below.
export MECHA_ARGS="--model cassette:$tmp/work/cassette.jsonl -j 2"
submitted=1

# Runs the array (its outputs are $out/$1-JOB_INDEX.out); fails with the logs' tails.
submit() {
  local rc=0
  # In the background, so that an interrupted test's cleanup can stop it. 100 s each (a run
  # takes about 10): both, with the cluster's start and the cleanup, must end before CTest's
  # TIMEOUT (300), whose kill skips the cleanup and would leave the jobs' slurmstepd running.
  (cd "$out" && exec timeout 100 sbatch --wait --export=ALL --array=0-3 \
    --output="$out/$1-%A_%a.out" "$root/scripts/slurm/mecha-array.sbatch") &
  waiting=$!
  wait "$waiting" || rc=$?
  waiting=
  [ "$rc" -eq 0 ] && return 0
  if [ "$rc" -eq 124 ]; then
    echo "FAIL: slurm array test: the $1 array job did not finish in 100 s" >&2
  else
    echo "FAIL: slurm array test: sbatch --wait exited $rc for the $1 array job" >&2
  fi
  for f in "$out/$1"-*.out "$tmp"/log/slurmctld.log "$tmp"/log/slurmd.log; do
    [ -s "$f" ] || continue
    echo "--- $f" >&2
    tail -n 20 "$f" >&2
  done
  exit 1
}

# Every id has one line in results.jsonl, completed, and the array tasks of run $1 ran
# shards 0/4 to 3/4, one each.
check() {
  python3 - "$OUT/results.jsonl" "$out" "$1" <<'EOF'
import glob, json, re, sys
results, out, run = sys.argv[1:]
want = {f"t{k}" for k in range(20)}
seen = {}
with open(results) as f:
    for line in f:
        r = json.loads(line)
        seen.setdefault(r["id"], []).append(r["status"])
problems = []
for i in sorted(want - seen.keys()):
    problems.append(f"{i}: no result")
for i, st in sorted(seen.items()):
    if i not in want:
        problems.append(f"{i}: not a task")
    elif len(st) != 1:
        problems.append(f"{i}: {len(st)} results")
    elif st[0] != "completed":
        problems.append(f"{i}: {st[0]}")
shards = []
for path in glob.glob(f"{out}/{run}-*_*.out"):
    with open(path) as f:
        shards += re.findall(r"^mecha-array: shard (\d+/\d+) ", f.read(), re.M)
stores = sorted(p.rsplit("/", 1)[1] for p in glob.glob(f"{out}/batch/sessions-*.db"))
if stores != [f"sessions-{k}.db" for k in range(4)]:
    problems.append(f"the shards' stores are {stores}, not sessions-0.db to sessions-3.db")
if sorted(shards) != ["0/4", "1/4", "2/4", "3/4"]:
    problems.append(f"the {run} array ran shards {sorted(shards)}, not 0/4 to 3/4")
if problems:
    print(f"FAIL: slurm array test, {run} run: " + "; ".join(problems), file=sys.stderr)
    sys.exit(1)
EOF
}

submit first
check first
# The same array again resumes: every id has its result, so nothing runs twice.
submit again
check again
echo "PASS: slurm array test: 20/20 tasks completed once over 4 array shards, and a" \
  "resubmitted array added none (cluster up in ${up}s, $((SECONDS - start))s in all)"
