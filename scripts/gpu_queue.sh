#!/usr/bin/env bash
# GPU targets through the Redis queue on an NVIDIA GPU (issue 22; docs/scale.md "GPU
# targets"): the same `kernelevolve bench --target triton` of a few level-1 problems at
# their GPU sizes (problems/level1/gpu_sizes.json), once evaluated locally and once
# through a local redis-server served by `kernelevolve worker --target triton` (one per
# GPU, at most KE_GQ_WORKERS). Prints both benches' tables and which workers answered;
# the speedups of the two should agree within their intervals. Asserts nothing beyond
# exit 1 when either bench did not finish or a queued problem was not correct.
#
# Usage (from the checkout root on the GPU machine):
#   export KERNELEVOLVE_PYTHON=python3 KE_DLPACK_INCLUDE_DIR=$PWD/.gpu_deps/include PATH=$PWD/.gpu_deps/bin:$PATH
#   bash scripts/gpu_build.sh build-gpu && bash scripts/gpu_queue.sh [OUT_DIR]   (default /tmp/ke_gpu_queue)
# Needs redis-server on PATH (scripts/gpu_deps.sh ships one in .gpu_deps/bin) and a
# binary built with hiredis. Env: KE_GQ_PROBLEMS (level-1 names, default "relu softmax"),
# KE_GQ_BUDGET (4), KE_GQ_WORKERS (1), KE_GQ_FLAGS (default "--seeds 1 --min-time 0.05
# --confirm-rounds 3", as scripts/gpu_throughput.sh), KE_BIN (build-gpu/kernelevolve).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export KERNELEVOLVE_PYTHON="${KERNELEVOLVE_PYTHON:-python3}" PYTHONUNBUFFERED=1
unset TRITON_INTERPRET KE_FIXTURES
BIN="${KE_BIN:-build-gpu/kernelevolve}"
OUT="${1:-/tmp/ke_gpu_queue}"
[ -x "$BIN" ] || { echo "no $BIN: run scripts/gpu_build.sh build-gpu first" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "no redis-server on PATH (scripts/gpu_deps.sh ships one)" >&2; exit 1; }
rm -rf "$OUT"
mkdir -p "$OUT/suite"
for p in ${KE_GQ_PROBLEMS:-relu softmax}; do cp "problems/level1/$p.py" "$OUT/suite/"; done
# --sizes names only problems of the suite: the entries of these problems.
"$KERNELEVOLVE_PYTHON" - "$OUT/suite" <<'PY'
import json, pathlib, sys
suite = pathlib.Path(sys.argv[1])
sizes = json.load(open("problems/level1/gpu_sizes.json"))
json.dump({k: v for k, v in sizes.items() if (suite / f"{k}.py").exists()}, open(suite.parent / "sizes.json", "w"))
PY
read -r -a FLAGS <<< "${KE_GQ_FLAGS:---seeds 1 --min-time 0.05 --confirm-rounds 3}"
COMMON=(--target triton --sizes "$OUT/sizes.json" --budget "${KE_GQ_BUDGET:-4}" --no-kb "${FLAGS[@]}")

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; }
trap cleanup EXIT
PORT=$("$KERNELEVOLVE_PYTHON" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
URL="redis://127.0.0.1:$PORT/0"
redis-server --port "$PORT" --bind 127.0.0.1 --save "" --appendonly no --dir "$OUT" > "$OUT/redis.log" 2>&1 &
pids+=($!)
sleep 1

GPUS=$(nvidia-smi -L 2>/dev/null | wc -l)
WORKERS=$(( GPUS < ${KE_GQ_WORKERS:-1} ? GPUS : ${KE_GQ_WORKERS:-1} ))
(( WORKERS >= 1 )) || { echo "no GPU visible (nvidia-smi -L)" >&2; exit 1; }
echo "$(nvidia-smi -L | head -1); $WORKERS worker(s); bench ${COMMON[*]}"
for ((g = 0; g < WORKERS; g++)); do
  "$BIN" worker --queue "$URL" --target triton --gpus "$g" --name "gpu$g" --cache-dir "$OUT/wcache$g" \
    > "$OUT/worker$g.log" 2>&1 &
  pids+=($!)
done

status=0
for mode in local queue; do
  extra=()
  [ "$mode" = queue ] && extra=(--queue "$URL" --jobs "$WORKERS")
  start=$(date +%s)
  "$BIN" bench "$OUT/suite" "${COMMON[@]}" "${extra[@]}" --out "$OUT/$mode" --cache-dir "$OUT/cache_$mode" \
    > "$OUT/$mode.log" 2>&1
  rc=$?
  (( rc == 0 )) || status=1
  echo "== $mode: exit $rc after $(( $(date +%s) - start )) s"
  cat "$OUT/$mode/bench.txt" 2>/dev/null || { tail -5 "$OUT/$mode.log"; status=1; }
done
echo "== jobs answered per worker:"
for ((g = 0; g < WORKERS; g++)); do echo "gpu$g: $(grep -c ': job ' "$OUT/worker$g.log")"; done
"$KERNELEVOLVE_PYTHON" - "$OUT/queue/bench.json" <<'PY' || status=1
import json, sys
doc = json.load(open(sys.argv[1]))
bad = [e["problem"] for e in doc["problems"] if not e.get("correct")]
print("queued problems not correct:", bad or "none")
sys.exit(1 if bad or not doc["problems"] else 0)
PY
exit $status
