#!/usr/bin/env bash
# Runs `kernelevolve optimize --target triton` on every level-1 problem at small shapes
# under TRITON_INTERPRET=1 (no GPU: Triton's interpreter on CPU tensors; correctness
# only, timings mean nothing) and prints, per problem, the template chosen, how many
# candidates were correct and whether the best one is.
# Usage: scripts/triton_level1_interpret.sh [BINARY] [WORK_DIR] [BUDGET]
#   BINARY   default build/kernelevolve; WORK_DIR default /tmp/ke_triton_level1;
#   BUDGET   candidates per problem, default 2 (the templates' first drafts).
# Env: KE_JOBS problems run at once (default 1), KE_PROBLEMS names to run (default all).
# Exit status: 0 when every problem's best candidate is correct, 1 otherwise.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/build/kernelevolve}"
WORK="${2:-/tmp/ke_triton_level1}"
BUDGET="${3:-2}"
PY="${KE_PYTHON:-$ROOT/.venv/bin/python}"
export TRITON_INTERPRET=1 ROOT BIN WORK BUDGET PY
mkdir -p "$WORK"

# Small shapes per problem (module-level names of each problem file).
sets_for() {
  case "$1" in
    amax_lastdim) echo "--set batch_size=5 --set dim=300" ;;
    argmax_dim|argmin_dim|max_dim|min_dim|mean_dim|sum_dim|prod_dim)
      echo "--set batch_size=3 --set dim1=37 --set dim2=20" ;;
    batch_norm|group_norm|instance_norm|layer_norm|rms_norm|frobenius_norm)
      echo "--set batch_size=2 --set features=16 --set dim1=5 --set dim2=7" ;;
    cross_entropy) echo "--set batch_size=37 --set num_classes=50" ;;
    cumsum|cumprod|cumsum_reverse|cumsum_exclusive|masked_cumsum) echo "--set batch_size=5 --set length=3000" ;;
    softmax_channels) echo "--set batch_size=2 --set channels=12 --set length=50" ;;
    softmax|log_softmax) echo "--set batch_size=7 --set dim=100" ;;
    hinge_loss|huber_loss|kl_div|l1_norm|l2_norm|mse_loss|smooth_l1_loss) echo "--set batch_size=5 --set dim=3000" ;;
    *) echo "--set batch_size=4 --set dim=100" ;;
  esac
}

# One problem: optimize, then "template ok/total correct|incorrect" into WORK/NAME.row.
run_one() {
  local name="$1" out="$WORK/$1"
  rm -rf "$out"
  # shellcheck disable=SC2046
  (cd "$ROOT" && "$BIN" optimize "problems/level1/$name.py" --target triton $(sets_for "$name") \
     --budget "$BUDGET" --no-kb --seeds 2 --confirm-rounds 0 --min-time 0.01 --candidate-timeout 300 \
     --cache-dir "$WORK/cache_$name" --out "$out" >"$WORK/$name.log" 2>&1)
  "$PY" - "$out" > "$WORK/$name.row" <<'PYEOF'
import json, os, sqlite3, sys
out = sys.argv[1]
try:
    doc = json.load(open(os.path.join(out, "result.json")))
except Exception:
    print("- - incorrect(no-result)")
    sys.exit(0)
best = doc.get("best") or {}
db = sqlite3.connect(os.path.join(out, "kernelevolve.db"))
statuses = [s for (s,) in db.execute("SELECT status FROM evaluations")]
ok = sum(1 for s in statuses if s == "ok")
print(best.get("template", "-"), f"{ok}/{len(statuses)}", "correct" if best.get("correct") else "incorrect")
PYEOF
}
export -f run_one sets_for

names="${KE_PROBLEMS:-$(cd "$ROOT/problems/level1" && ls *.py | sed 's/\.py$//')}"
printf "%s\n" $names | xargs -P "${KE_JOBS:-1}" -I{} bash -c 'run_one {}'
printf "%-18s %-24s %-10s %s\n" problem template candidates best
bad=0
for name in $names; do
  read -r tmpl cands verdict < "$WORK/$name.row"
  printf "%-18s %-24s %-10s %s\n" "$name" "$tmpl" "$cands" "$verdict"
  [ "$verdict" = correct ] || bad=1
done
exit $bad
