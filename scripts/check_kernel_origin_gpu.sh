#!/usr/bin/env bash
# Kernel-origin check on an NVIDIA GPU (issue 21, item 2): `kernelevolve eval --target
# triton` on the adversarial Triton candidates of tests/adversarial/triton (a launcher
# calling torch.softmax; torch.matmul on half the rows; a correct Triton matmul plus
# torch.mm on a side stream) and on the honest controls, printing each verdict. Each
# adversarial one must end rejected_by_check with the foreign kernel named; each
# control ok. Then the runner-level pytest file (tests/python/test_kernel_origin.py,
# its GPU tests included).
#
#   scripts/gpu_build.sh build-gpu && scripts/check_kernel_origin_gpu.sh [OUT]
#
# Environment: KE_BIN (default build-gpu/kernelevolve), KE_PYTHON (default
# .venv/bin/python, else python3). OUT (default a temporary folder) keeps each
# result.json and the verdict lines (verdicts.txt). Exit 0 when every candidate got
# the expected verdict. Takes about 2-3 minutes on an H200.
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/gpu_check_env.sh ke_origin_gpu build-gpu/kernelevolve "${1:-}"  # BIN, PY, OUT; exit 2 without GPU

ADV=tests/adversarial/triton
SOFTMAX=(problems/level1/softmax.py --set batch_size=256 --set dim=1000)
MATMUL=(problems/gpu_gemm/matmul.py --set M=512 --set N=512 --set K=512)
failures=0
# check NAME EXPECTED_STATUS PROBLEM_ARGS...
check() {
  local name=$1 expected=$2; shift 2
  local dir="$OUT/${name%.py}"
  KE_REFERENCE_DEVICE=cuda "$BIN" eval "$1" "$ADV/$name" "${@:2}" --target triton --seeds 2 --confirm-rounds 0 \
      --quiet --out "$dir" >"$dir.log" 2>&1
  local verdict
  verdict=$("$PY" - "$dir/result.json" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except OSError as exc:
    print(f"no result.json ({exc})")
    sys.exit(0)
e = r.get("eval") or {}
print(f"{e.get('verdict', r.get('status', '?'))}: {e.get('message', '')}")
PY
)
  local ok=no
  case "$verdict" in "$expected"*) ok=yes ;; esac
  [ "$expected" = ok ] && case "$verdict" in correct*) ok=yes ;; esac
  [ "$ok" = yes ] || failures=$((failures + 1))
  printf '%-28s expected %-18s %s  %s\n' "$name" "$expected" "$([ $ok = yes ] && echo PASS || echo FAIL)" "$verdict" \
      | tee -a "$OUT/verdicts.txt"
  grep -m3 -i "rejected_by_check\|do not come from" "$dir.log" | sed 's/^/    /'
}
check softmax_torch.py rejected_by_check "${SOFTMAX[@]}"
check ok_softmax.py ok "${SOFTMAX[@]}"
check matmul_half_torch.py rejected_by_check "${MATMUL[@]}"
check matmul_side_stream_mm.py rejected_by_check "${MATMUL[@]}"
check ok_matmul.py ok "${MATMUL[@]}"

echo "== tests/python/test_kernel_origin.py (GPU tests included)"
"$PY" -m pytest -q tests/python/test_kernel_origin.py || failures=$((failures + 1))
echo "check_kernel_origin_gpu: $failures failure(s); verdicts in $OUT/verdicts.txt"
[ "$failures" -eq 0 ]
