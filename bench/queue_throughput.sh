#!/bin/bash
# Suite throughput (issue 22; docs/scale.md): the wall time of `kernelevolve bench SUITE
# --budget N` in several configurations on this machine, and the per-problem fixed cost
# (wall time per problem that is not the search: process and Python start, torch import,
# problem load with reference runs and fixtures, eager and torch.compile baselines, the
# final confirmation, reports), with the mean seconds per phase of the problems' runs
# (result.json's phase_seconds). Prints figures; asserts nothing. Each configuration
# starts from empty build caches.
#
#   bench/queue_throughput.sh [SUITE_DIR] [BUDGET] [extra bench flags...]
#   PROBLEMS="relu softmax sum_dim" bench/queue_throughput.sh problems/level1 4
#
# Configurations (CONFIGS, default all four):
#   local-fresh  the local evaluator, a fresh Python worker per problem (KERNELEVOLVE_WORKER_POOL=0:
#                how bench ran before issue 22 item 4)
#   local        the local evaluator, one pooled Python worker for the whole suite
#   queue-1      through Redis, 1 `kernelevolve worker` on this machine, 1 problem at a time
#   queue-2      through Redis, 2 workers, 2 problems at a time (bench --problems-at-once 0: one per live worker)
# Environment: KE_BIN (default build/kernelevolve), PROBLEMS (problem names of SUITE_DIR to
# run; default every problem), CONFIGS, KEEP=1 (keep the work folder and print its path).
# Without redis-server on PATH the queue configurations are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=${1:-problems/level1}
BUDGET=${2:-4}
shift $(( $# > 2 ? 2 : $# ))
BIN=${KE_BIN:-build/kernelevolve}
CONFIGS=${CONFIGS:-local-fresh local queue-1 queue-2}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ke_throughput.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  if [ "${KEEP:-0}" = 1 ]; then echo "work folder kept: $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

if [ -n "${PROBLEMS:-}" ]; then  # a subset: copies in a suite folder of its own
  mkdir -p "$WORK/suite"
  for p in $PROBLEMS; do cp "$SUITE/$p.py" "$WORK/suite/"; done
  SUITE="$WORK/suite"
fi
N=$(ls "$SUITE"/*.py | grep -v '/_' | wc -l)

URL=""
if command -v redis-server >/dev/null; then
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  URL="redis://127.0.0.1:$PORT/0"
  redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" --daemonize no \
    > "$WORK/redis.log" 2>&1 & pids+=($!)
  for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
fi

# One bench; prints "<label> <wall> s  <wall/problem> s/problem  fixed <s>/problem  (<totals>)".
run() {
  local label=$1 workers=$2 pool=$3
  shift 3
  local dir="$WORK/$label"
  mkdir -p "$dir"
  local wpids=()
  for ((i = 0; i < workers; i++)); do
    "$BIN" worker --queue "$URL" --name "w$i" --cache-dir "$dir/wcache$i" > "$dir/w$i.log" 2>&1 & wpids+=($!)
  done
  pids+=("${wpids[@]}")
  local extra=()
  if ((workers > 0)); then
    extra=(--queue "$URL" --problems-at-once 0)
    # Until every worker is connected (bench counts live workers for --problems-at-once 0
    # by their named connections; a consumer group lists a worker only after its first job).
    for _ in $(seq 120); do
      (( $(redis-cli -p "$PORT" CLIENT LIST 2>/dev/null | grep -c ' name=ke-worker:cpu:') >= workers )) && break
      sleep 0.5
    done
  fi
  local load_before start end
  load_before=$(cut -d' ' -f1 /proc/loadavg)
  start=$(date +%s.%N)
  KERNELEVOLVE_WORKER_POOL=$pool "$BIN" bench "$SUITE" --budget "$BUDGET" --out "$dir/bench" \
    --cache-dir "$dir/cache" "${extra[@]}" "$@" > "$dir/bench.log" 2>&1 || true
  end=$(date +%s.%N)
  for p in "${wpids[@]}"; do kill "$p" 2>/dev/null || true; done
  python3 - "$dir/bench/bench.json" "$start" "$end" "$label" "$load_before" "$(cut -d' ' -f1 /proc/loadavg)" \
    "$dir/bench.log" <<'EOF'
import json, sys
path, start, end, label, load0, load1, log = sys.argv[1:]
wall = float(end) - float(start)
try:
    doc = json.load(open(path))
except (OSError, ValueError):
    print(f"{label:<12} {wall:8.1f} s   no bench.json: see {log}")
    sys.exit(0)
t, entries = doc["totals"], doc["problems"]
n = max(1, len(entries))
search = sum(e.get("elapsed_seconds", 0.0) for e in entries)
# Problems one after another: the time outside the searches is the fixed cost. Several
# at once: searches overlap, so only the wall time per problem is meaningful.
fixed = f"fixed {(wall - search) / n:6.1f} s/problem" if not label.startswith("queue-2") else "fixed n/a (overlapping)"
print(f"{label:<12} {wall:8.1f} s  {wall / n:6.1f} s/problem  {fixed}  search {search / n:5.1f} s/problem  "
      f"({t['problems']} problems, {t['correct']} correct; load average {load0} -> {load1})")
# Where each problem's time went: result.json's phase_seconds (docs/result_json.md),
# averaged over the problems; a dotted name is a worker's part of the phase before it.
sums, count = {}, 0
for e in entries:
    try:
        phases = json.load(open(f"{e['run_dir']}/result.json")).get("phase_seconds", {})
    except (OSError, ValueError, KeyError):
        continue
    count += 1
    for name, seconds in phases.items():
        sums[name] = sums.get(name, 0.0) + seconds
if count:
    order = ["worker_start", "load", "machine_peaks", "gpu_prepare", "baseline_profile", "search", "confirmation",
             "knowledge", "profiles"]
    def rank(name):  # the order phases run in, each followed by its parts
        top = name.split(".")[0]
        return (order.index(top) if top in order else len(order), top, name)
    shown = ", ".join(f"{k} {sums[k] / count:.1f}" for k in sorted(sums, key=rank))
    print(f"{'':<12} phases, s/problem over {count}: {shown}")
EOF
}

echo "bench $SUITE --budget $BUDGET $* ($N problems) on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)), $(date -u +%FT%TZ)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for c in $CONFIGS; do
  case $c in
    local-fresh) run local-fresh 0 0 "$@" ;;
    local) run local 0 1 "$@" ;;
    queue-1) if [ -n "$URL" ]; then run queue-1 1 1 "$@"; else echo "queue-1: skipped (no redis-server)"; fi ;;
    queue-2) if [ -n "$URL" ]; then run queue-2 2 1 "$@"; else echo "queue-2: skipped (no redis-server)"; fi ;;
    *) echo "unknown configuration $c" >&2; exit 2 ;;
  esac
done
