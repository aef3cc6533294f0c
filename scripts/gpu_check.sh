#!/usr/bin/env bash
# Checks kernelevolve's GPU target on a machine with an NVIDIA GPU (docs/gpu.md):
#   0. what the machine has (GPU, torch, triton, development headers, shared libraries);
#   1. the GPU runner's Python tests (tests/python/test_gpu_runner.py, GPU tests included);
#   2. a kernelevolve binary: KE_GPU_BIN=native builds one (scripts/gpu_build.sh, headers
#      the machine lacks from $KE_GPU_DEPS/include); prebuilt takes the one that
#      scripts/gpu_deps.sh put in $KE_GPU_DEPS/bin, linking in from $KE_GPU_DEPS/lib only
#      the libraries the machine lacks; auto (default) tries native, then prebuilt.
#      With a native build, the C++ GPU tests (ctest label gpu) run too;
#   3. `kernelevolve optimize --target triton` on softmax 8192 x 4096 fp32 and on the
#      level-1 problems named in KE_GPU_LEVEL1 at 4096 x 16384.
# Run directories (with GBs of fixtures) go to $KE_GPU_WORK; OUT_DIR gets the logs,
# result.json files, databases and summary.txt.
# Usage: scripts/gpu_check.sh [OUT_DIR]        (default: ./gpu_check_out)
# Env: KERNELEVOLVE_PYTHON (default python3: the one holding torch and triton),
#      KE_GPU_DEPS (default .gpu_deps), KE_GPU_BIN (auto | native | prebuilt),
#      KE_GPU_BUDGET (default 12 candidates for softmax; 0: no softmax run), KE_GPU_LEVEL1 (default
#      "relu gelu"; "" for none), KE_GPU_LEVEL1_BUDGET (default 6), KE_GPU_PYTEST (1),
#      KE_GPU_CUDA (0; 1: also --target cuda, KE_GPU_CUDA_LEVEL1, KE_GPU_CUDA_BUDGET (12)).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$(mkdir -p "${1:-gpu_check_out}" && cd "${1:-gpu_check_out}" && pwd)"
DEPS="$(cd "${KE_GPU_DEPS:-.gpu_deps}" 2>/dev/null && pwd || echo /nonexistent)"
WORK="${KE_GPU_WORK:-/tmp/ke_gpu_runs}"
# nvcc (--target cuda) needs dlpack/dlpack.h, which the GPU machine lacks: gpu_deps.sh ships it.
if [ ! -f /usr/include/dlpack/dlpack.h ] && [ -f "$DEPS/include/dlpack/dlpack.h" ]; then
  export KE_DLPACK_INCLUDE_DIR="$DEPS/include"
fi
mkdir -p "$WORK"
export KERNELEVOLVE_PYTHON="${KERNELEVOLVE_PYTHON:-$(command -v python3)}"
export PYTHONUNBUFFERED=1
unset TRITON_INTERPRET
BUDGET="${KE_GPU_BUDGET:-12}"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

log "0. machine: $(nvidia-smi -L 2>&1 | head -1); python $KERNELEVOLVE_PYTHON"
"$KERNELEVOLVE_PYTHON" -c "import torch, triton; p = torch.cuda.get_device_properties(0); \
print('torch', torch.__version__, 'triton', triton.__version__, p.name, 'L2', p.L2_cache_size, 'SMs', p.multi_processor_count)" \
  2>&1 | tee -a "$OUT/summary.txt"
{
  echo "headers: $(ls -d /usr/include/sqlite3.h /usr/include/seccomp.h /usr/include/curl \
    /usr/include/x86_64-linux-gnu/curl /usr/include/dlpack /usr/include/gtest 2>&1 | tr '\n' ' ')"
  echo "libraries: $(ldconfig -p | grep -oE 'lib(curl|seccomp|sqlite3|fmt|gtest)[^ ]*' | sort -u | tr '\n' ' ')"
  echo "tools: $(cmake --version | head -1); $(g++ --version | head -1)"
} | tee -a "$OUT/summary.txt"

if [ "${KE_GPU_PYTEST:-1}" = 1 ]; then
  log "1. GPU runner tests (pytest)"
  PYTHONPATH=worker:tests/python "$KERNELEVOLVE_PYTHON" -m pytest -vv --tb=short -p no:cacheprovider \
    tests/python/test_gpu_runner.py > "$OUT/pytest_gpu.log" 2>&1
  log "pytest exit $? ($(tail -1 "$OUT/pytest_gpu.log"))"
fi

# A prebuilt binary: link the libraries the machine lacks from $DEPS/lib into $WORK/lib.
use_prebuilt() {
  [ -x "$DEPS/bin/kernelevolve" ] || { log "no prebuilt binary in $DEPS/bin"; return 1; }
  mkdir -p "$WORK/lib"
  export LD_LIBRARY_PATH="$WORK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  for _ in 1 2 3; do  # libraries the linked-in ones need in turn
    for lib in $(ldd "$DEPS/bin/kernelevolve" | awk '/not found/ {print $1}'); do
      ln -sf "$DEPS/lib/$lib" "$WORK/lib/$lib"
    done
  done
  log "prebuilt: linked in from $DEPS/lib: $(ls "$WORK/lib" | tr '\n' ' ')"
  if ldd "$DEPS/bin/kernelevolve" | grep -q "not found"; then log "prebuilt: still missing libraries"; return 1; fi
  # The prebuilt binary finds worker/ under the source folder it was built from
  # (KE_SOURCE_DIR, recorded by gpu_deps.sh): point that path at this checkout.
  local src
  src="$(cat "$DEPS/source_dir" 2>/dev/null)"
  if [ -n "$src" ] && [ ! -e "$src/worker" ]; then
    mkdir -p "$(dirname "$src")" && ln -sfn "$ROOT" "$src" && log "prebuilt: linked $src -> $ROOT"
  fi
  BIN="$DEPS/bin/kernelevolve"
}

BIN=""
MODE="${KE_GPU_BIN:-auto}"
if [ "$MODE" != prebuilt ]; then
  log "2. native build"
  if bash scripts/gpu_build.sh build-gpu > "$OUT/build.log" 2>&1; then
    BIN="$ROOT/build-gpu/kernelevolve"
    log "native build ok"
    if cmake --build build-gpu -j "$(nproc)" --target gpu_tests >> "$OUT/build.log" 2>&1; then
      ctest --test-dir build-gpu -L gpu --output-on-failure > "$OUT/ctest_gpu.log" 2>&1
      log "ctest -L gpu exit $? ($(grep -E 'tests passed|No tests' "$OUT/ctest_gpu.log"))"
    else
      log "gpu_tests did not build (see build.log)"
    fi
  else
    log "native build failed (tail of build.log):"; tail -5 "$OUT/build.log" | tee -a "$OUT/summary.txt"
  fi
fi
if [ -z "$BIN" ] && [ "$MODE" != native ]; then
  log "2. prebuilt binary"
  use_prebuilt
fi
[ -n "$BIN" ] || { log "no kernelevolve binary: stopping"; exit 1; }

# Copies what a run left (not its fixtures) to OUT and prints the figures of result.json.
report() {  # NAME RUN_DIR BYTES_PER_CALL
  mkdir -p "$OUT/$1"
  cp "$2/result.json" "$2/kernelevolve.db" "$2"/best_kernel.* "$OUT/$1/" 2>/dev/null
  cp -r "$2/logs" "$OUT/$1/" 2>/dev/null
  "$KERNELEVOLVE_PYTHON" - "$2/result.json" "$1" "$3" <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import json, sys
r = json.load(open(sys.argv[1]))
g, best = r.get("gpu", {}), r.get("best") or {}
med = (best.get("kernel_only_us") or {}).get("median")
eager = (g.get("paired_eager_us") or {}).get("median") or (g.get("eager_us") or {}).get("median")
comp = (g.get("paired_torch_compile_us") or {}).get("median") or (g.get("torch_compile_us") or {}).get("median")
print(f"{sys.argv[2]}: status {r.get('status')} | {g.get('device')} | copy {g.get('copy_bandwidth_gbps', 0):.0f} GB/s")
if med:
    gbps = float(sys.argv[3]) / med / 1e3
    print(f"  best kernel {med:.2f} us = {gbps:.0f} GB/s; eager {eager:.2f} us, torch.compile {comp:.2f} us; "
          f"speedup vs eager {best.get('speedup_vs_eager', 0):.2f}x (confirmed "
          f"{(best.get('confirmed') or {}).get('speedup_vs_eager', 0):.2f}x), vs torch.compile "
          f"{g.get('best_speedup_vs_torch_compile', 0):.2f}x; knobs {json.dumps(best.get('knobs'))}")
PY
}

optimize() {  # NAME PROBLEM BUDGET ROWS COLS  (TARGET=triton|cuda, default triton)
  log "3. $1: $2 at $4 x $5, --target ${TARGET:-triton}, budget $3"
  rm -rf "$WORK/run_$1"
  "$BIN" optimize "$2" --target "${TARGET:-triton}" --set batch_size="$4" --set dim="$5" --budget "$3" --seeds 2 \
    --confirm-rounds 3 --no-kb --quiet --cache-dir "$WORK/cache" --out "$WORK/run_$1" > "$OUT/$1.log" 2>&1
  log "$1 exit $?"
  tail -25 "$OUT/$1.log" >> "$OUT/summary.txt"
  report "$1" "$WORK/run_$1" "$((2 * $4 * $5 * 4))"
}

[ "$BUDGET" -gt 0 ] && optimize softmax problems/level1/softmax.py "$BUDGET" 8192 4096
for p in ${KE_GPU_LEVEL1-relu gelu}; do
  [ -f "problems/level1/$p.py" ] && optimize "$p" "problems/level1/$p.py" "${KE_GPU_LEVEL1_BUDGET:-6}" 4096 16384
done
# KE_GPU_CUDA=1: the CUDA C++ target (nvcc from $CUDACXX, PATH or /usr/local/cuda/bin)
# on softmax 8192 x 4096 and KE_GPU_CUDA_LEVEL1 (default "relu gelu") at 4096 x 16384,
# plus the cuda_candidate.py tests and the CUDA GPU tests when a native build exists.
if [ "${KE_GPU_CUDA:-0}" = 1 ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
  log "4. CUDA target: $(nvcc --version 2>/dev/null | grep release || echo 'nvcc not found')"
  PYTHONPATH=worker:tests/python "$KERNELEVOLVE_PYTHON" -m pytest -vv --tb=short -p no:cacheprovider \
    tests/python/test_cuda_candidate.py > "$OUT/pytest_cuda.log" 2>&1
  log "pytest cuda_candidate exit $? ($(tail -1 "$OUT/pytest_cuda.log"))"
  GPU_TESTS="$(find "$WORK" build* -name gpu_tests -type f -perm -u+x 2>/dev/null | head -1)"
  if [ -n "$GPU_TESTS" ]; then
    "$GPU_TESTS" --gtest_filter='CudaGpu*' > "$OUT/gpu_tests_cuda.log" 2>&1
    log "gpu_tests CudaGpu* exit $? ($(grep -E 'PASSED|FAILED' "$OUT/gpu_tests_cuda.log" | tail -1))"
  fi
  TARGET=cuda
  optimize cuda_softmax problems/level1/softmax.py "${KE_GPU_CUDA_BUDGET:-12}" 8192 4096
  for p in ${KE_GPU_CUDA_LEVEL1-relu gelu}; do
    optimize "cuda_$p" "problems/level1/$p.py" "${KE_GPU_CUDA_BUDGET:-12}" 4096 16384
  done
  unset TARGET
fi
log "done"
