#!/usr/bin/env bash
# On a machine with an NVIDIA GPU: `kernelevolve optimize --target triton` on every
# level-1 problem that the triton_rowwise / triton_scan templates serve (reductions,
# norms, losses, softmax over other dims, cumulative ops), at the problem files' own
# shapes unless overridden, and a summary table (template, best knobs, kernel median,
# eager and torch.compile medians, speedups).
# Usage: scripts/triton_level1_gpu.sh BINARY OUT_DIR [PROBLEM...]
#   PROBLEM defaults to the list below. Shapes: KE_SETS_<problem>="--set batch_size=4096 ..."
#   overrides one problem's shape. Env: KE_GPU_BUDGET (candidates per problem, default 8),
#   KE_GPU_WORK (run directories, default /tmp/ke_triton_l1), KERNELEVOLVE_PYTHON.
# Writes OUT_DIR/<problem>.log, OUT_DIR/<problem>.result.json and OUT_DIR/summary.txt.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:?usage: triton_level1_gpu.sh BINARY OUT_DIR [PROBLEM...]}"
OUT="$(mkdir -p "${2:?OUT_DIR}" && cd "$2" && pwd)"
shift 2
WORK="${KE_GPU_WORK:-/tmp/ke_triton_l1}"
BUDGET="${KE_GPU_BUDGET:-8}"
PY="${KERNELEVOLVE_PYTHON:-$(command -v python3)}"
unset TRITON_INTERPRET
mkdir -p "$WORK"
PROBLEMS=("$@")
if [ ${#PROBLEMS[@]} -eq 0 ]; then
  PROBLEMS=(sum_dim mean_dim max_dim min_dim amax_lastdim prod_dim argmax_dim argmin_dim l1_norm l2_norm
            frobenius_norm layer_norm rms_norm group_norm instance_norm batch_norm softmax_channels
            log_softmax mse_loss huber_loss smooth_l1_loss kl_div hinge_loss cross_entropy cumsum cumprod
            cumsum_reverse cumsum_exclusive masked_cumsum)
fi
cd "$ROOT"
for p in "${PROBLEMS[@]}"; do
  var="KE_SETS_$p"
  sets="${!var:-}"
  echo "== $p ${sets:-(file shapes)}" | tee -a "$OUT/summary.txt"
  rm -rf "$WORK/run_$p"
  # shellcheck disable=SC2086
  "$BIN" optimize "problems/level1/$p.py" --target triton $sets --budget "$BUDGET" --seeds 2 \
    --confirm-rounds 3 --no-kb --quiet --cache-dir "$WORK/cache" --out "$WORK/run_$p" > "$OUT/$p.log" 2>&1
  echo "exit $?" >> "$OUT/summary.txt"
  cp "$WORK/run_$p/result.json" "$OUT/$p.result.json" 2>/dev/null
done
"$PY" - "$OUT" "${PROBLEMS[@]}" <<'PY' | tee -a "$OUT/summary.txt"
import json, os, sys
out = sys.argv[1]
print(f"{'problem':18} {'template':16} {'ok':3} {'kernel us':>10} {'eager us':>10} {'compile us':>10} "
      f"{'vs eager':>8} {'vs compile':>10}  knobs")
for p in sys.argv[2:]:
    try:
        r = json.load(open(os.path.join(out, p + ".result.json")))
    except Exception:
        print(f"{p:18} (no result.json: see {p}.log)")
        continue
    g, best = r.get("gpu", {}), r.get("best") or {}
    med = (best.get("kernel_only_us") or {}).get("median") or 0
    eager = ((g.get("paired_eager_us") or {}).get("median") or (g.get("eager_us") or {}).get("median") or 0)
    comp = ((g.get("paired_torch_compile_us") or {}).get("median")
            or (g.get("torch_compile_us") or {}).get("median") or 0)
    print(f"{p:18} {best.get('template', '-'):16} {'yes' if best.get('correct') else 'NO':3} {med:10.2f} "
          f"{eager:10.2f} {comp:10.2f} {(eager / med if med else 0):7.2f}x {(comp / med if med else 0):9.2f}x  "
          f"{json.dumps(best.get('knobs'))}")
PY
