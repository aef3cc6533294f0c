#!/usr/bin/env bash
# The recommendation-model suite (problems/recsys, issue 19) on an NVIDIA GPU with
# --target triton: `kernelevolve bench` at the files' own (CPU) sizes, or with
# KE_RS_SIZES=gpu on the problems problems/recsys/gpu_sizes.json lists, at those sizes.
# Prints the bench table (outcome, speedup vs eager with its interval, roofline fraction
# of the copy bandwidth, torch.compile ratio) into OUT_DIR/summary.txt.
#
# Usage (from the checkout root on the GPU machine): scripts/gpu_recsys.sh [OUT_DIR]
#   (default ./gpu_recsys_out)
# Env: KE_RS_SIZES (cpu | gpu), KE_RS_BUDGET (6), KE_RS_PROBLEMS (space-separated stems;
#      default all, or all in gpu_sizes.json), KE_GPU_BIN (prebuilt), KE_GPU_WORK, KERNELEVOLVE_PYTHON.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$(mkdir -p "${1:-gpu_recsys_out}" && cd "${1:-gpu_recsys_out}" && pwd)"
SIZES="${KE_RS_SIZES:-cpu}"
# shellcheck source=scripts/gpu_bin.sh
source "$ROOT/scripts/gpu_bin.sh"
gpu_bin_setup prebuilt
"$BIN" --help > /dev/null 2>&1 || { log "no working kernelevolve binary (see setup.log)"; tail -5 "$OUT/setup.log"; exit 1; }
log "binary $BIN ($(( $(date +%s) - START )) s); $(nvidia-smi -L 2>&1 | head -1)"

SUITE="$WORK/recsys_suite"
rm -rf "$SUITE" "$WORK/recsys_bench" && mkdir -p "$SUITE"
"$KERNELEVOLVE_PYTHON" - "$SIZES" "$SUITE" "${KE_RS_PROBLEMS:-}" <<'PY'
import json, pathlib, shutil, sys
mode, suite, wanted = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3].split()
sizes = {k: v for k, v in json.loads(pathlib.Path("problems/recsys/gpu_sizes.json").read_text()).items()
         if not k.startswith("_")}
files = sorted(pathlib.Path("problems/recsys").glob("*.py"))
mine = [p for p in files if (not wanted or p.stem in wanted) and (mode != "gpu" or p.stem in sizes)]
for p in mine:
    shutil.copy(p, suite / p.name)
(suite / "sizes.json").write_text(json.dumps({p.stem: sizes[p.stem] for p in mine if mode == "gpu"}, indent=1))
print(f"{len(mine)} problems at {mode} sizes: {' '.join(p.stem for p in mine)}")
PY
log "bench: $(ls "$SUITE"/*.py | wc -l) problems at $SIZES sizes, budget ${KE_RS_BUDGET:-6}"
"$BIN" bench "$SUITE" --target triton --sizes "$SUITE/sizes.json" --budget "${KE_RS_BUDGET:-6}" \
  --seeds 3 --min-time 0.05 --confirm-rounds 3 --candidate-timeout 60 --profile-top 0 \
  --cache-dir "$WORK/cache" --out "$WORK/recsys_bench" > "$OUT/bench.log" 2>&1
log "bench exit $? ($(( $(date +%s) - START )) s since start)"
cp "$WORK/recsys_bench/bench.json" "$WORK/recsys_bench/bench.txt" "$OUT/" 2>/dev/null
cat "$OUT/bench.txt" >> "$OUT/summary.txt" 2>/dev/null
# Why candidates failed, per problem without a correct one (from each run's database).
"$KERNELEVOLVE_PYTHON" scripts/failed_candidates.py "$WORK/recsys_bench" | tee -a "$OUT/summary.txt"
# The best kernels and every run's summary, for reading (no fixtures), in one archive.
(cd "$WORK/recsys_bench" && tar czf "$OUT/runs.tgz" --exclude=fixtures --exclude='*.db' */best_kernel.py */summary.txt \
  */logs 2>/dev/null)
log "done in $(( $(date +%s) - START )) s"
