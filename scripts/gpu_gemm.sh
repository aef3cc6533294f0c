#!/usr/bin/env bash
# The gemm set on an NVIDIA GPU (issue 6, docs/gpu.md "Matmul"): `kernelevolve optimize
# --target triton` on every problems/gpu_gemm problem at S^3 (default 4096), then the
# figures the issue asks for: the best kernel's TFLOP/s, torch.mm's alone (same
# dtype), the eager chain (matmul then epilogue) and torch.compile, with the ratios
# kernel / torch.mm (>= 0.7) and eager chain / fused kernel (> 1).
#   1. a binary: $KE_GPU_BIN_PATH, else build-gpu/kernelevolve (scripts/gpu_check.sh's
#      native build), else scripts/gpu_check.sh with its own runs switched off
#      (KE_GPU_BUDGET=0 KE_GPU_LEVEL1="" KE_GPU_PYTEST=0) to build or link one;
#   2. torch.mm alone at S^3 in float16 and bfloat16 (scripts/gpu_gemm_report.py mm);
#   3. one optimize run per problem (KE_REFERENCE_DEVICE=cuda: the problem worker runs
#      the references on the GPU; a float16 4096^3 matmul takes ~45 s on the CPU);
#   4. the table (scripts/gpu_gemm_report.py summary) -> OUT/summary.txt, gemm_summary.json.
# Run directories (fixtures: ~100 MB per problem) go to $KE_GPU_WORK; OUT gets the
# logs, result.json, best kernels, databases and the tables.
# Usage: scripts/gpu_gemm.sh [OUT_DIR]          (default: ./gpu_gemm_out)
# Env: KE_GEMM_PROBLEMS (default: all five), KE_GEMM_BUDGET (12), KE_GEMM_SIZE (4096),
#      KE_GEMM_PROFILE_TOP (0: no ncu), KERNELEVOLVE_PYTHON, KE_GPU_BIN_PATH, KE_GPU_WORK.
# About 1-2 minutes per problem (torch.compile of the baseline, 12 Triton compiles);
# under a 10-minute limit per command, run the problems in two or three groups with
# KE_GEMM_PROBLEMS and the same OUT_DIR (the mm figures are reused, the table covers
# every run found in OUT_DIR).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$(mkdir -p "${1:-gpu_gemm_out}" && cd "${1:-gpu_gemm_out}" && pwd)"
WORK="${KE_GPU_WORK:-/tmp/ke_gpu_runs}"
mkdir -p "$WORK"
export KERNELEVOLVE_PYTHON="${KERNELEVOLVE_PYTHON:-$(command -v python3)}"
export PYTHONUNBUFFERED=1
export KE_REFERENCE_DEVICE=cuda
unset TRITON_INTERPRET
SIZE="${KE_GEMM_SIZE:-4096}"
BUDGET="${KE_GEMM_BUDGET:-12}"
PROBLEMS="${KE_GEMM_PROBLEMS:-matmul matmul_bias_gelu matmul_scale_residual matmul_bias_relu matmul_bias_silu}"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }

BIN="${KE_GPU_BIN_PATH:-}"
if [ -z "$BIN" ] && [ -x build-gpu/kernelevolve ]; then BIN="$ROOT/build-gpu/kernelevolve"; fi
if [ -z "$BIN" ]; then
  log "1. no binary yet: scripts/gpu_check.sh (build or prebuilt; no runs)"
  KE_GPU_BUDGET=0 KE_GPU_LEVEL1="" KE_GPU_PYTEST=0 bash scripts/gpu_check.sh "$OUT/gpu_check" > "$OUT/gpu_check.log" 2>&1
  if [ -x build-gpu/kernelevolve ]; then
    BIN="$ROOT/build-gpu/kernelevolve"
  elif [ -x .gpu_deps/bin/kernelevolve ]; then
    BIN="$ROOT/.gpu_deps/bin/kernelevolve"
    export LD_LIBRARY_PATH="$WORK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"  # gpu_check.sh linked them there
  fi
fi
[ -n "$BIN" ] || { log "no kernelevolve binary (see $OUT/gpu_check.log): stopping"; exit 1; }
log "binary $BIN; problems: $PROBLEMS; ${SIZE}^3, budget $BUDGET"

if [ ! -s "$OUT/torch_mm.json" ]; then
  log "2. torch.mm alone at ${SIZE}^3"
  "$KERNELEVOLVE_PYTHON" scripts/gpu_gemm_report.py mm --size "$SIZE" --out "$OUT/torch_mm.json" 2>&1 | tee -a "$OUT/summary.txt"
fi

for p in $PROBLEMS; do
  [ -f "problems/gpu_gemm/$p.py" ] || { log "no problems/gpu_gemm/$p.py"; continue; }
  log "3. $p at ${SIZE}^3, --target triton, budget $BUDGET"
  rm -rf "$WORK/gemm_$p"
  start=$(date +%s)
  "$BIN" optimize "problems/gpu_gemm/$p.py" --target triton --set M="$SIZE" --set N="$SIZE" --set K="$SIZE" \
    --budget "$BUDGET" --seeds 2 --confirm-rounds 3 --no-kb --profile-top "${KE_GEMM_PROFILE_TOP:-0}" \
    --cache-dir "$WORK/cache" --out "$WORK/gemm_$p" > "$OUT/$p.log" 2>&1
  log "$p exit $? after $(( $(date +%s) - start )) s"
  tail -22 "$OUT/$p.log" >> "$OUT/summary.txt"
  mkdir -p "$OUT/runs/$p"
  cp "$WORK/gemm_$p/result.json" "$WORK/gemm_$p/kernelevolve.db" "$WORK/gemm_$p/best_kernel.py" "$OUT/runs/$p/" 2>/dev/null
  cp -r "$WORK/gemm_$p/logs" "$OUT/runs/$p/" 2>/dev/null
done
cp "$WORK/cache/triton/gpu_peaks.json" "$OUT/" 2>/dev/null

log "4. summary"
"$KERNELEVOLVE_PYTHON" scripts/gpu_gemm_report.py summary --size "$SIZE" --mm "$OUT/torch_mm.json" "$OUT"/runs/* \
  2>&1 | tee -a "$OUT/summary.txt"
log "done (gpu_peaks.json: $(tr -d '\n ' 2>/dev/null < "$OUT/gpu_peaks.json" | head -c 400))"
