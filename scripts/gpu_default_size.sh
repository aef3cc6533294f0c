#!/usr/bin/env bash
# A KernelBench-default-sized problem on an NVIDIA GPU without fixture files on disk
# (issue 22 item 3; docs/scale.md "Fixtures on the device"): relu at KernelBench's own
# level-1 size, 4096 x 393216 float32 (6.4 GB of input, 6.4 GB of output per set), with
# --fixtures device (the problem worker writes the manifest only; the GPU runner draws
# every seed and edge set on the device) and KE_REFERENCE_DEVICE=cuda (the problem
# worker's reference runs and eager timing on the GPU). Prints the run's outcome, the
# fixture files found under the run directory (expected: none besides manifest.json)
# and the run directory's size. Asserts nothing beyond exiting 1 when a tensor file
# was written or the run failed.
#
# Usage (from the checkout root on the GPU machine, after scripts/gpu_build.sh build-gpu):
#   bash scripts/gpu_default_size.sh [OUT_DIR]        (default /tmp/ke_default_size)
# Env: KE_DS_PROBLEM (relu), KE_DS_SETS ("batch_size=4096 dim=393216"), KE_DS_BUDGET (2),
#      KE_BIN (build-gpu/kernelevolve), KE_DS_TARGET (triton).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export KERNELEVOLVE_PYTHON="${KERNELEVOLVE_PYTHON:-python3}" PYTHONUNBUFFERED=1
export KE_REFERENCE_DEVICE=cuda
unset TRITON_INTERPRET
BIN="${KE_BIN:-build-gpu/kernelevolve}"
OUT="${1:-/tmp/ke_default_size}"
rm -rf "$OUT"
SETS=()
for s in ${KE_DS_SETS:-batch_size=4096 dim=393216}; do SETS+=(--set "$s"); done
echo "$(nvidia-smi -L 2>&1 | head -1); free disk: $(df -h --output=avail "$(dirname "$OUT")" | tail -1)"
start=$(date +%s)
"$BIN" optimize "problems/level1/${KE_DS_PROBLEM:-relu}.py" --target "${KE_DS_TARGET:-triton}" "${SETS[@]}" \
  --seeds 1 --budget "${KE_DS_BUDGET:-2}" --confirm-rounds 2 --profile-top 0 --no-kb --out "$OUT" --load-timeout 1200 \
  --fixtures device
code=$?
echo "exit $code after $(( $(date +%s) - start )) s"
echo "peak GPU memory is in $OUT/logs/worker.log and gpu_runner.log when the runner logs it; nvidia-smi now:"
nvidia-smi --query-gpu=memory.used,memory.total --format=csv 2>&1 | tail -1
tensors=$(find "$OUT" -name '*.safetensors' | wc -l)
echo "tensor files under $OUT: $tensors; run directory size: $(du -sh "$OUT" | cut -f1)"
"$KERNELEVOLVE_PYTHON" - "$OUT/result.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print(f"no result.json: {e}"); sys.exit(0)
best = r.get("best") or {}
print(f"status {r.get('status')}, stop {r.get('stop_reason')}, {r.get('evaluations')} evaluations, "
      f"best speedup {best.get('speedup', {}).get('value') if isinstance(best.get('speedup'), dict) else best.get('speedup')}")
print("inputs:", [(t["name"], t["shape"], t["dtype"]) for t in r.get("problem_inputs", [])] or "see summary above")
print("phase seconds:", {k: round(v, 1) for k, v in (r.get("phase_seconds") or {}).items()})
PY
[ "$code" -le 1 ] && [ "$tensors" -eq 0 ]
