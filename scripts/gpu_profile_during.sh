#!/usr/bin/env bash
# Nsight Compute profiles DURING the search (issue 6, --profile-during; docs/gpu.md
# "Profiling") on an NVIDIA GPU:
#   1. a kernelevolve binary, set up by scripts/gpu_check.sh (its step 2 only; KE_GPU_BIN
#      as there, default here: auto = native build, else prebuilt; a prebuilt one must
#      come from this tree: scripts/gpu_deps.sh BUILD_DIR on the build machine);
#   2. `optimize` of group_norm and softmax at GPU sizes with --profile-during
#      KE_PD_N (default 2) and --profile-top 1; for each, summary.txt gets the
#      "profiling node N with ncu before expanding it" lines, the profiles of result.json
#      (during_search, status, seconds, diagnosis) and the rationale of every child of a
#      profiled node (it should carry the ncu line and its advice), with the wall time.
# Usage: scripts/gpu_profile_during.sh [OUT_DIR]     (default ./gpu_profile_during_out)
# Env: KE_PD_N (2), KE_PD_BUDGET (8), KE_PD_PROBLEMS ("group_norm softmax"),
#      KE_GPU_BIN (auto), KE_GPU_WORK (/tmp/ke_gpu_runs), KERNELEVOLVE_PYTHON (python3).
# Time: ~1-2 min of fixed cost per problem plus ~20-60 s per ncu call (KE_PD_N + 1 at
# most per problem): ~5-8 min for the two problems (an estimate, not yet measured).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$(mkdir -p "${1:-gpu_profile_during_out}" && cd "${1:-gpu_profile_during_out}" && pwd)"
N="${KE_PD_N:-2}"
BUDGET="${KE_PD_BUDGET:-8}"
# WORK, KERNELEVOLVE_PYTHON, log, START and gpu_bin_setup.
# shellcheck source=scripts/gpu_bin.sh
source "$ROOT/scripts/gpu_bin.sh"

# 1. The binary: gpu_check.sh's setup alone (it leaves build-gpu/ or $WORK/lib behind).
gpu_bin_setup auto
"$BIN" optimize --help 2>&1 | grep -q -- --profile-during ||
  { log "binary $BIN lacks --profile-during (stale prebuilt? see setup.log)"; exit 1; }
log "1. binary $BIN ($(( $(date +%s) - START )) s); $(nvidia-smi -L 2>&1 | head -1); ncu: $(command -v ncu || echo missing)"

sizes_for() {  # the problem's GPU shape from problems/level1/gpu_sizes.json, as --set flags
  "$KERNELEVOLVE_PYTHON" -c "import json,sys; d=json.load(open('problems/level1/gpu_sizes.json')).get(sys.argv[1], {}); \
print(' '.join(f'--set {k}={v}' for k, v in d.items()))" "$1"
}

for P in ${KE_PD_PROBLEMS:-group_norm softmax}; do
  RUN="$WORK/pd_$P"
  rm -rf "$RUN"
  T0=$(date +%s)
  # shellcheck disable=SC2046
  "$BIN" optimize "problems/level1/$P.py" --target triton $(sizes_for "$P") --budget "$BUDGET" --seeds 1 \
    --confirm-rounds 3 --no-kb --profile-during "$N" --profile-top 1 --profile-timeout 180 \
    --cache-dir "$WORK/cache" --out "$RUN" > "$OUT/$P.log" 2>&1
  log "2. $P: optimize exit $? in $(( $(date +%s) - T0 )) s"
  grep -E "with ncu|^node [0-9]+: ncu" "$OUT/$P.log" | tee -a "$OUT/summary.txt"
  mkdir -p "$OUT/$P"
  cp "$RUN/result.json" "$RUN/kernelevolve.db" "$OUT/$P/" 2>/dev/null
  "$KERNELEVOLVE_PYTHON" - "$RUN/result.json" "$RUN/kernelevolve.db" <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import json, sqlite3, sys
r = json.load(open(sys.argv[1]))
profiled = []
for p in r.get("profiles", []):
    prof = p["profile"]
    print(f"node {p['node_id']} rank {p['rank']} during_search={p.get('during_search')}: "
          f"ncu {prof['status']} {prof['note']} ({prof['seconds']:.0f} s)")
    print("   diagnosis:", p["diagnosis"]["text"])
    for k in prof.get("kernels", []):
        print("   kernel", json.dumps({key: k.get(key) for key in ("name", "duration_us",
              "dram_throughput_pct", "sm_throughput_pct", "achieved_occupancy_pct",
              "registers_per_thread")}))
    if p.get("during_search"):
        profiled.append(p["node_id"])
db = sqlite3.connect(sys.argv[2])
for parent in profiled:
    for nid, rationale in db.execute("SELECT id, rationale FROM nodes WHERE parent_id = ? ORDER BY id", (parent,)):
        print(f"   child {nid} of {parent}: {rationale[:300]}")
best = r.get("best") or {}
print("best:", best.get("node_id"), "speedup vs eager", best.get("speedup_vs_eager"))
PY
  rm -rf "$RUN/fixtures"
done
log "done in $(( $(date +%s) - START )) s"
