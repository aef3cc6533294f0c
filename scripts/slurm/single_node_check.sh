#!/bin/bash
# scripts/slurm/workers.sbatch under real Slurm on this one machine (issue 22 item 3;
# docs/scale.md "Slurm"): a private single-node Slurm cluster, a local redis-server, the
# sbatch script's two workers, and one `optimize --queue` that they serve. Prints the
# run's outcome, its number of evaluations, which Slurm tasks served its jobs and the
# job's state; exits nonzero unless the run ended with its budget of evaluations and
# the Slurm job completed (its workers exiting on their idle timeout).
#
#   apt-get install slurm-wlm munge redis-server     # Debian bookworm: Slurm 22.05
#   scripts/slurm/single_node_check.sh               # as root, from any directory
#
# The cluster is always a private one, whatever else runs here: its own munged (its own
# key and socket), slurmctld and slurmd on free local ports, config, state, spool and
# logs all in one temp folder (SLURM_CONF points the client commands at it). No
# accounting daemon (so no sacct: the job's final state comes from `scontrol show job`),
# no cgroups (proctrack/linuxproc, task/none). An already running cluster is not used:
# its compute nodes could not reach a redis-server bound to 127.0.0.1. Needs root
# (slurmd starts the job's processes as the submitting user) and no network.
#
# Environment: KE_BIN (default build/kernelevolve), BUDGET (4), NTASKS (2: workers, and
# the run's --jobs), KE_IDLE_EXIT (20: seconds a worker waits without a job before it
# exits; it must exceed the orchestrator's problem load, or the workers leave before
# the first job), PROBLEM (problems/level1/relu.py), KEEP=1 (keep the temp folder and
# print its path; the daemons are stopped all the same).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$PWD
BIN=${KE_BIN:-build/kernelevolve}
BUDGET=${BUDGET:-4}
NTASKS=${NTASKS:-2}
IDLE=${KE_IDLE_EXIT:-20}
PROBLEM=${PROBLEM:-problems/level1/relu.py}

[ "$(id -u)" = 0 ] || { echo "single_node_check: run as root (slurmd starts the job's processes)" >&2; exit 2; }
for tool in munged mungekey slurmctld slurmd sbatch squeue scontrol redis-server redis-cli python3; do
  command -v "$tool" >/dev/null || { echo "single_node_check: no $tool (apt-get install slurm-wlm munge redis-server)" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "single_node_check: no $BIN: build kernelevolve first (scripts/setup.sh)" >&2; exit 2; }

# munged wants execute permission for all on every folder above its socket: 755.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ke_slurm_check.XXXXXX")
chmod 755 "$WORK"
mkdir -p "$WORK/munge" "$WORK/slurm/state" "$WORK/slurm/spool"
redis_pid="" optimize_pid="" job=""
export SLURM_CONF="$WORK/slurm/slurm.conf"

# Everything this script started, by pid (pid files for the daemons), then the folder.
cleanup() {
  set +e
  [ -n "$optimize_pid" ] && kill "$optimize_pid" 2>/dev/null
  if [ -n "$job" ] && squeue -h -j "$job" 2>/dev/null | grep -q .; then
    scancel "$job"
    for _ in $(seq 30); do squeue -h -j "$job" 2>/dev/null | grep -q . || break; sleep 1; done
  fi
  local daemons=() f p
  for f in "$WORK/slurm/slurmd.pid" "$WORK/slurm/slurmctld.pid" "$WORK/munge/munged.pid"; do
    [ -s "$f" ] && daemons+=("$(cat "$f")")
  done
  for p in "${daemons[@]}"; do kill "$p" 2>/dev/null; done
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null
  wait 2>/dev/null
  for p in "${daemons[@]}"; do  # gone before their folder is
    for _ in $(seq 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.25; done
  done
  if [ "${KEEP:-0}" = 1 ]; then echo "temp folder kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# 1. munge: a fresh key, a daemon on a socket of its own.
mungekey -c -k "$WORK/munge/munge.key"
munged --socket="$WORK/munge/munge.socket" --key-file="$WORK/munge/munge.key" \
  --pid-file="$WORK/munge/munged.pid" --log-file="$WORK/munge/munged.log" --seed-file="$WORK/munge/munged.seed"

# 2. Slurm: this machine as its one node (CPUs, sockets, memory as slurmd -C sees them),
# reached at 127.0.0.1 so that no name lookup matters.
NODE=$(hostname -s)
cat > "$SLURM_CONF" <<EOF
ClusterName=kecheck
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$WORK/munge/munge.socket
StateSaveLocation=$WORK/slurm/state
SlurmdSpoolDir=$WORK/slurm/spool
SlurmctldPidFile=$WORK/slurm/slurmctld.pid
SlurmdPidFile=$WORK/slurm/slurmd.pid
SlurmctldLogFile=$WORK/slurm/slurmctld.log
SlurmdLogFile=$WORK/slurm/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
$(slurmd -C | head -n1 | sed "s/^NodeName=[^ ]*/NodeName=$NODE/") NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=check Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N "$NODE"
for _ in $(seq 60); do [ "$(sinfo -h -n "$NODE" -o %t 2>/dev/null)" = idle ] && break; sleep 0.5; done
if [ "$(sinfo -h -n "$NODE" -o %t 2>/dev/null)" != idle ]; then
  echo "single_node_check: node $NODE not idle: $(sinfo 2>&1)" >&2
  tail -n 20 "$WORK/slurm/slurmctld.log" "$WORK/slurm/slurmd.log" >&2
  exit 1
fi
echo "$(sinfo --version) private cluster: $(sinfo -h -o '%P %a %D %t %N %c CPUs')"

# 3. The queue: redis-server on a free local port.
PORT=$(free_port)
URL="redis://127.0.0.1:$PORT/0"
redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" --daemonize no \
  > "$WORK/redis.log" 2>&1 & redis_pid=$!
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

# 4. The workers: the sbatch script as a user submits it (its log in the temp folder),
# then wait until each task's worker is connected to the queue.
job=$(KE_QUEUE=$URL KE_IDLE_EXIT=$IDLE KE_ROOT=$ROOT KE_CACHE_DIR=$WORK/worker-cache \
  sbatch --parsable --ntasks="$NTASKS" --cpus-per-task=1 --output="$WORK/kernelevolve-workers-%j.out" \
  scripts/slurm/workers.sbatch)
LOG="$WORK/kernelevolve-workers-$job.out"
echo "submitted: KE_QUEUE=$URL KE_IDLE_EXIT=$IDLE sbatch --ntasks=$NTASKS --cpus-per-task=1 scripts/slurm/workers.sbatch -> job $job"
# A worker names its Redis connection ke-worker:<target>:<name> (what bench counts for
# --problems-at-once 0). The group's consumer list would not do here: Redis 7.0 adds a
# consumer only once its XREADGROUP returns an entry, so before the first job it is empty.
workers_connected() { redis-cli -p "$PORT" CLIENT LIST | grep -oE 'name=ke-worker:cpu:[^ ]+' | sed 's/^name=ke-worker:cpu://'; }
joined=0
for _ in $(seq 240); do
  joined=$(workers_connected | grep -c . || true)
  (( joined >= NTASKS )) && break
  squeue -h -j "$job" | grep -q . || break  # the job ended before its workers connected
  sleep 0.5
done
echo "squeue: $(squeue -h -j "$job" -o '%i %j %T %D %C %N' 2>&1)"
if (( joined < NTASKS )); then
  echo "single_node_check: $joined of $NTASKS workers connected to the queue" >&2
  cat "$LOG" >&2 2>/dev/null || true
  exit 1
fi
echo "workers connected to the queue: $(workers_connected | sort | tr '\n' ' ')"

# 5. The search through the queue. Should the workers leave before the search is done
# (the job ended, no "search stopped" line yet), stop it instead of letting it wait out
# the queue timeout. After the search the final confirmation runs here, without them.
RUN="$WORK/run"
"$BIN" optimize "$PROBLEM" --budget "$BUDGET" --jobs "$NTASKS" --queue "$URL" --out "$RUN" --no-kb \
  --cache-dir "$WORK/cache" > "$WORK/optimize.out" 2> "$WORK/optimize.err" & optimize_pid=$!
gone=0
while kill -0 "$optimize_pid" 2>/dev/null; do
  if squeue -h -j "$job" | grep -q . || grep -q '^search stopped' "$WORK/optimize.err"; then
    gone=0
  else
    gone=$((gone + 1))
  fi
  if (( gone > 10 )); then
    echo "single_node_check: the Slurm job ended before the search did; stopping optimize" >&2
    kill "$optimize_pid" 2>/dev/null || true
    break
  fi
  sleep 1
done
code=0
wait "$optimize_pid" || code=$?
optimize_pid=""
echo "--- optimize (exit $code):"
grep -E '^(evaluating through|search stopped|confirming)' "$WORK/optimize.err" || true
cat "$WORK/optimize.out"

# 6. The record: the run's store (evaluations, and the worker behind each node).
python3 - "$RUN/kernelevolve.db" <<'EOF' | tee "$WORK/store.txt"
import sqlite3, sys
try:
    db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
    n = db.execute("SELECT COUNT(*) FROM evaluations").fetchone()[0]
    status, stop = db.execute("SELECT status, stop_reason FROM runs").fetchone()
    by = db.execute("SELECT json_extract(worker_json, '$.worker'), COUNT(*) FROM node_workers GROUP BY 1 ORDER BY 1").fetchall()
except Exception as e:  # no store: the run never started
    print(f"store: unreadable ({e})")
    sys.exit(0)
print(f"store: evaluations={n} status={status} stop_reason={stop}")
print("store: nodes measured per worker: " + ", ".join(f"{w} {c}" for w, c in by))
EOF

# 7. The workers leave after KE_IDLE_EXIT idle seconds, and with them the job.
for _ in $(seq $((IDLE + 90))); do squeue -h -j "$job" | grep -q . || break; sleep 1; done
state=$(scontrol show job "$job" | grep -oE 'JobState=[^ ]+|ExitCode=[^ ]+|RunTime=[^ ]+| NodeList=[^ ]+|NumTasks=[^ ]+' | tr -s ' \n' ' ' || true)
echo "slurm job $job: $state"
echo "worker log: jobs answered per worker: $(grep -oE '^worker [^ ]+: job ' "$LOG" | awk '{print $2}' | sed 's/:$//' |
  sort | uniq -c | awk '{printf "%s %s, ", $2, $1}' | sed 's/, $//')"
echo "--- $(basename "$LOG"):"
cat "$LOG"

evals=$(sed -n 's/^store: evaluations=\([0-9]*\) .*/\1/p' "$WORK/store.txt")
fail=0
[ "$code" = 0 ] || { echo "FAIL: optimize exited $code" >&2; fail=1; }
[ "${evals:-0}" = "$BUDGET" ] || { echo "FAIL: ${evals:-no} evaluations, budget $BUDGET" >&2; fail=1; }
[[ $state == *JobState=COMPLETED* ]] || { echo "FAIL: Slurm job $job did not complete: $state" >&2; fail=1; }
(( fail == 0 )) && echo "OK: $BUDGET of $BUDGET evaluations through Slurm job $job's $NTASKS workers"
exit "$fail"
