#!/usr/bin/env bash
# Checks `kernelevolve export` of --target triton runs on an NVIDIA GPU (issue 20, item 1;
# the CPU path is checked by ctest's ExportCliTest). For relu and layer_norm (parameters):
# a small Triton search, `kernelevolve export`, then tests/integration/export_check.py in a
# fresh Python on CUDA tensors: ModelNew with Model's state_dict (strict, perturbed weights)
# matches Model within the run's tolerance, eager and under torch.compile(fullgraph=True).
#
#   scripts/check_export_gpu.sh            # after scripts/setup.sh built build/kernelevolve
#
# Environment: KE_BIN (default build/kernelevolve), KE_PYTHON (default .venv/bin/python).
# Takes about 2-4 minutes on an H200. Exit 0 when every check passed.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_check_env.sh ke_export_gpu build/kernelevolve  # BIN, PY, OUT; exit 2 without GPU
WORK=$OUT
trap 'rm -rf "$WORK"' EXIT
for problem in relu layer_norm; do
  echo "== $problem"
  "$BIN" optimize "problems/level1/$problem.py" --target triton --budget 4 --confirm-rounds 0 --seeds 2 \
      --no-kb --quiet --profile-during 0 --profile-top 0 --cache-dir "$WORK/cache" --out "$WORK/$problem" >/dev/null
  "$BIN" export "$WORK/$problem"
  flags=(--device cuda)
  [ "$problem" = layer_norm ] && flags+=(--perturb)
  KERNELEVOLVE_EXPORT_CACHE="$WORK/export_cache" "$PY" tests/integration/export_check.py "$WORK/$problem/export" "${flags[@]}"
done
echo "check_export_gpu: all checks passed"
