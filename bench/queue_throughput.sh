#!/bin/bash
# Wall time of `kernelevolve bench SUITE --budget N` with the local evaluator and through
# the Redis queue with 1 and 2 workers on this machine (issue 22; docs/scale.md). Prints
# figures; asserts nothing. Each configuration starts from empty build caches.
#
#   bench/queue_throughput.sh [SUITE_DIR] [BUDGET] [extra bench flags...]
#   bench/queue_throughput.sh problems/level1 4
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=${1:-problems/level1}
BUDGET=${2:-4}
shift $(( $# > 2 ? 2 : $# ))
BIN=build/kernelevolve
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ke_queue_bench.XXXXXX")
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="redis://127.0.0.1:$PORT/0"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$WORK" --daemonize no \
  > "$WORK/redis.log" 2>&1 & pids+=($!)
for _ in $(seq 50); do redis-cli -p "$PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done

# One bench; prints "<label>: <seconds> s, <problems> problems, <ok> ok".
run() {
  local label=$1 workers=$2
  shift 2
  local dir="$WORK/$label"
  mkdir -p "$dir"
  local wpids=()
  for ((i = 0; i < workers; i++)); do
    "$BIN" worker --queue "$URL" --name "w$i" --cache-dir "$dir/wcache$i" > "$dir/w$i.log" 2>&1 & wpids+=($!)
  done
  pids+=("${wpids[@]}")
  local queue=()
  if ((workers > 0)); then queue=(--queue "$URL" --jobs "$workers"); fi
  local start end
  start=$(date +%s.%N)
  "$BIN" bench "$SUITE" --budget "$BUDGET" --out "$dir/bench" --cache-dir "$dir/cache" "${queue[@]}" "$@" \
    > "$dir/bench.log" 2>&1 || true
  end=$(date +%s.%N)
  for p in "${wpids[@]}"; do kill "$p" 2>/dev/null || true; done
  local summary
  summary=$(python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["totals"]; print("%d problems, %d correct, geomean %.2fx" % (t["problems"], t["correct"], t["geomean_speedup_correct"]))' "$dir/bench/bench.json" 2>/dev/null || echo "no bench.json: see $dir/bench.log")
  printf '%-10s %8.1f s  (%s)\n' "$label" "$(echo "$end - $start" | bc)" "$summary"
}

echo "bench $SUITE --budget $BUDGET $* on $(nproc) CPUs ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
run local 0 "$@"
run queue-1 1 "$@"
run queue-2 2 "$@"
