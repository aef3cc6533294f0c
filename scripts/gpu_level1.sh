#!/usr/bin/env bash
# The level-1 suite at GPU sizes on an NVIDIA GPU (issue 6; docs/gpu.md "Bench at GPU
# sizes" and "Profiling"):
#   1. a kernelevolve binary, set up by scripts/gpu_check.sh (its step 2 only: no pytest,
#      no optimize runs; KE_GPU_BIN as there, default here: prebuilt from .gpu_deps), and
#      tests/python/test_gpu_profile.py on the GPU (real ncu on a Triton relu);
#   2. `kernelevolve bench problems/level1 --target triton --sizes problems/level1/gpu_sizes.json`
#      on the shard KE_L1_SHARD=i/n of the suite (problems in name order, every n-th
#      from the i-th), so that each shard fits one device command;
#   3. (KE_L1_PROFILE=1, the default on shard 1) one `optimize` of softmax 8192 x 4096 with
#      --profile-top 2: Nsight Compute metrics of the two best candidates and the
#      torch.profiler breakdown of eager, printed into summary.txt.
# Fixtures of a finished problem are deleted as the bench goes (each is ~1.5 GB at these
# sizes), so the disk holds one problem's at a time.
# Usage: scripts/gpu_level1.sh [OUT_DIR]     (default ./gpu_level1_out)
# Env: KE_L1_SHARD (1/1), KE_L1_BUDGET (4 candidates per problem), KE_L1_MIN_TIME (0.05 s),
#      KE_L1_SEEDS (1), KE_L1_CONFIRM (3 rounds), KE_L1_PROFILE (1 on shard 1, else 0), KE_GPU_BIN (prebuilt),
#      KE_GPU_WORK (/tmp/ke_gpu_runs), KERNELEVOLVE_PYTHON (python3).
# Time: per problem ~10-20 s of fixed cost (two Python processes importing torch,
# fixtures, the torch.compile baseline) plus budget x (Triton compile + checks + timing,
# ~1-3 s). With the defaults, estimate ~20-30 s per problem: 44 problems ~15-20 min,
# hence shards: KE_L1_SHARD=1/3, 2/3, 3/3 at ~5-7 min each (not yet measured on the H200).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$(mkdir -p "${1:-gpu_level1_out}" && cd "${1:-gpu_level1_out}" && pwd)"
SHARD="${KE_L1_SHARD:-1/1}"
# WORK, KERNELEVOLVE_PYTHON, log, START and gpu_bin_setup.
# shellcheck source=scripts/gpu_bin.sh
source "$ROOT/scripts/gpu_bin.sh"

# 1. The binary: gpu_check.sh's setup alone (it leaves build-gpu/ or $WORK/lib behind).
gpu_bin_setup prebuilt
"$BIN" --help > /dev/null 2>&1 || { log "no working kernelevolve binary (see setup.log)"; tail -5 "$OUT/setup.log"; exit 1; }
log "1. binary $BIN ($(( $(date +%s) - START )) s); $(nvidia-smi -L 2>&1 | head -1); ncu: $(command -v ncu || echo missing)"

# 1b. The profiling tests on this GPU (torch.profiler on CUDA, real ncu on a Triton relu).
PYTHONPATH=worker:tests/python "$KERNELEVOLVE_PYTHON" -m pytest -q -s -p no:cacheprovider \
  tests/python/test_gpu_profile.py > "$OUT/pytest_profile.log" 2>&1
log "profiling pytest exit $? ($(tail -1 "$OUT/pytest_profile.log")); $(grep -m1 '^ncu:' "$OUT/pytest_profile.log")"

# 2. The shard of the suite, with its part of the sizes file.
SUITE="$WORK/level1_shard"
rm -rf "$SUITE" "$WORK/bench" && mkdir -p "$SUITE"
"$KERNELEVOLVE_PYTHON" - "$SHARD" "$SUITE" <<'PY'
import json, pathlib, shutil, sys
i, n = (int(x) for x in sys.argv[1].split("/"))
suite = pathlib.Path(sys.argv[2])
files = sorted(p for p in pathlib.Path("problems/level1").glob("*.py") if not p.name.startswith("_"))
mine = files[i - 1::n]
for p in mine:
    shutil.copy(p, suite / p.name)
sizes = json.loads(pathlib.Path("problems/level1/gpu_sizes.json").read_text())
(suite / "gpu_sizes.json").write_text(json.dumps({p.stem: sizes[p.stem] for p in mine}, indent=1))
print(f"shard {i}/{n}: {len(mine)} problems: {' '.join(p.stem for p in mine)}")
PY
log "2. bench shard $SHARD: $(ls "$SUITE"/*.py | wc -l) problems, budget ${KE_L1_BUDGET:-4}"
( while sleep 3; do  # fixtures of finished problems (result.json written last) go
    for d in "$WORK"/bench/*/; do [ -f "$d/result.json" ] && rm -rf "$d/fixtures"; done
  done ) &
CLEANER=$!
"$BIN" bench "$SUITE" --target triton --sizes "$SUITE/gpu_sizes.json" --budget "${KE_L1_BUDGET:-4}" \
  --seeds "${KE_L1_SEEDS:-1}" --min-time "${KE_L1_MIN_TIME:-0.05}" --confirm-rounds "${KE_L1_CONFIRM:-3}" \
  --candidate-timeout 60 --profile-top 0 --cache-dir "$WORK/cache" --out "$WORK/bench" \
  > "$OUT/bench.log" 2>&1
log "bench exit $? ($(( $(date +%s) - START )) s since start)"
kill "$CLEANER" 2>/dev/null
cp "$WORK/bench/bench.json" "$WORK/bench/bench.txt" "$OUT/" 2>/dev/null
for d in "$WORK"/bench/*/; do
  name="$(basename "$d")"; mkdir -p "$OUT/runs/$name"
  cp "$d/result.json" "$d/summary.txt" "$d/best_kernel.py" "$OUT/runs/$name/" 2>/dev/null
  cp -r "$d/logs" "$OUT/runs/$name/" 2>/dev/null
  rm -rf "$d/fixtures"
done
cat "$OUT/bench.txt" >> "$OUT/summary.txt" 2>/dev/null

# 3. One optimize with ncu on: the profile of the two best softmax kernels.
if [ "${KE_L1_PROFILE:-$([ "${SHARD%%/*}" = 1 ] && echo 1 || echo 0)}" = 1 ]; then  # default: shard 1 only
  log "3. optimize softmax 8192 x 4096 with --profile-top 2"
  rm -rf "$WORK/run_profile"
  "$BIN" optimize problems/level1/softmax.py --target triton --set batch_size=8192 --set dim=4096 --budget 6 \
    --seeds 1 --confirm-rounds 3 --no-kb --profile-top 2 --profile-timeout 180 --cache-dir "$WORK/cache" \
    --out "$WORK/run_profile" > "$OUT/profile.log" 2>&1
  log "optimize exit $? ($(( $(date +%s) - START )) s since start)"
  mkdir -p "$OUT/run_profile"
  cp "$WORK/run_profile/result.json" "$WORK/run_profile/kernelevolve.db" "$OUT/run_profile/" 2>/dev/null
  cp -r "$WORK/run_profile/logs" "$OUT/run_profile/" 2>/dev/null
  grep -A12 "eager baseline (torch.profiler" "$OUT/profile.log" >> "$OUT/summary.txt"
  "$KERNELEVOLVE_PYTHON" - "$WORK/run_profile/result.json" <<'PY' 2>&1 | tee -a "$OUT/summary.txt"
import json, sys
r = json.load(open(sys.argv[1]))
for p in r.get("profiles", []):
    prof = p["profile"]
    print(f"node {p['node_id']}: ncu {prof['status']} {prof['note']} ({prof['seconds']:.0f} s)")
    for k in prof["kernels"]:
        print("  ", json.dumps({key: k.get(key) for key in ("name", "duration_us", "dram_throughput_pct",
              "sm_throughput_pct", "achieved_occupancy_pct", "registers_per_thread", "top_stalls")}))
    print("   diagnosis:", p["diagnosis"]["text"])
print("baseline_profile:", json.dumps((r.get("gpu") or {}).get("baseline_profile"))[:600])
PY
  rm -rf "$WORK/run_profile/fixtures"
fi
log "done in $(( $(date +%s) - START )) s"
