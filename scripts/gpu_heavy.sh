#!/usr/bin/env bash
# The heavy-op folders (issue 18: problems/attention, conv, matmul, networks, pool, rnn) on
# an NVIDIA GPU with --target triton at the sizes of each folder's gpu_sizes.json (or, with
# KE_HV_SIZES=cpu, at the files' own sizes: a quick correctness pass):
# `kernelevolve bench` on the problems of KE_HV_FOLDERS, split into KE_HV_SHARDS shards
# (problems in name order, every n-th from the i-th) that run at the same time, one bench
# process each, so that the whole set fits one device command. Shards share the GPU:
# correctness is unaffected, but the speedups of shards run beside each other are timed
# on a shared GPU (eager and candidate interleaved in the same process, so both slow
# down; the ratios are noisier than a lone run's). KE_HV_SHARDS=1 gives lone timings.
# Each shard stops at KE_HV_DEADLINE seconds; what finished is kept (bench.log lists every
# finished problem; bench.txt is written only when a shard finishes).
#
# Usage (from the checkout root on the GPU machine): scripts/gpu_heavy.sh [OUT_DIR]
#   (default ./gpu_heavy_out)
# Env: KE_HV_SIZES (gpu | cpu), KE_HV_FOLDERS ("attention conv matmul networks pool rnn"), KE_HV_PROBLEMS
#      (space-separated stems; default all), KE_HV_SHARDS (2), KE_HV_BUDGET (2),
#      KE_HV_DEADLINE (480 s), KE_HV_CANDIDATE_TIMEOUT (60 s a candidate), KE_HV_THREADS (CPU threads
#      per shard for the problem worker's CPU-side reference work: the machine's CPUs / KE_HV_SHARDS,
#      since every shard on all of them oversubscribes the cores; with 4 shards two loads ran past
#      the 300 s --load-timeout, 2026-12-06), KE_HV_LOAD_TIMEOUT (600 s), KE_HV_FIXTURES (device: input sets drawn on the GPU, no
#      files; four shards of fixture files at these sizes filled the 64 GB disk), KE_REFERENCE_DEVICE (cuda:
#      the problem worker runs forward() for references and eager timing on the GPU, where the CPU took
#      minutes per load at these sizes; graphs whose GPU trace is not portable are traced on the CPU),
#      KE_GPU_BIN (prebuilt), KE_GPU_WORK, KERNELEVOLVE_PYTHON.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
OUT="$(mkdir -p "${1:-gpu_heavy_out}" && cd "${1:-gpu_heavy_out}" && pwd)"
SHARDS="${KE_HV_SHARDS:-2}"
HV_SIZES="${KE_HV_SIZES:-gpu}"
# shellcheck source=scripts/gpu_bin.sh
source "$ROOT/scripts/gpu_bin.sh"
gpu_bin_setup prebuilt
HV="$WORK/heavy-$HV_SIZES"
"$BIN" --help > /dev/null 2>&1 || { log "no working kernelevolve binary (see setup.log)"; tail -5 "$OUT/setup.log"; exit 1; }
log "binary $BIN ($(( $(date +%s) - START )) s); $(nvidia-smi -L 2>&1 | head -1)"

# One folder per shard with its problems and their sizes.
"$KERNELEVOLVE_PYTHON" - "$HV" "$SHARDS" "${KE_HV_FOLDERS:-attention conv matmul networks pool rnn}" \
  "${KE_HV_PROBLEMS:-}" "$HV_SIZES" <<'PY' | tee -a "$OUT/summary.txt"
import json, pathlib, shutil, sys
work, shards, folders, wanted = pathlib.Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split()
at_gpu_sizes = sys.argv[5] == "gpu"
shutil.rmtree(work, ignore_errors=True)
problems, sizes = [], {}
for folder in folders:
    d = pathlib.Path("problems") / folder
    if (d / "gpu_sizes.json").exists():  # core_ops, chains and level2 have none: their files' sizes
        sizes.update({k: v for k, v in json.loads((d / "gpu_sizes.json").read_text()).items() if not k.startswith("_")})
    problems += [p for p in sorted(d.glob("*.py")) if not wanted or p.stem in wanted]
problems.sort(key=lambda p: p.stem)
for i in range(shards):
    suite = work / f"shard{i + 1}" / "suite"
    suite.mkdir(parents=True)
    mine = problems[i::shards]
    for p in mine:
        shutil.copy(p, suite / p.name)
    (suite / "sizes.json").write_text(json.dumps({p.stem: sizes[p.stem] for p in mine if at_gpu_sizes and p.stem in sizes}, indent=1))
    print(f"== shard {i + 1}: {len(mine)} problems: {' '.join(p.stem for p in mine)}")
PY
export KE_REFERENCE_DEVICE="${KE_REFERENCE_DEVICE:-cuda}"
THREADS="${KE_HV_THREADS:-$(( $(nproc) / SHARDS > 0 ? $(nproc) / SHARDS : 1 ))}"
for i in $(seq 1 "$SHARDS"); do
  S="$HV/shard$i"
  timeout "${KE_HV_DEADLINE:-480}" "$BIN" bench "$S/suite" --target triton --sizes "$S/suite/sizes.json" \
    --threads "$THREADS" --load-timeout "${KE_HV_LOAD_TIMEOUT:-600}" \
    --budget "${KE_HV_BUDGET:-2}" --seeds 3 --min-time 0.05 --confirm-rounds 3 --candidate-timeout "${KE_HV_CANDIDATE_TIMEOUT:-60}" \
    --profile-top 0 --fixtures "${KE_HV_FIXTURES:-device}" --cache-dir "$S/cache" --out "$S/bench" > "$OUT/bench$i.log" 2>&1 &
done
wait
log "benches done ($(( $(date +%s) - START )) s since start)"
for i in $(seq 1 "$SHARDS"); do
  S="$HV/shard$i"
  echo "== shard $i" >> "$OUT/summary.txt"
  if [ -f "$S/bench/bench.txt" ]; then
    cp "$S/bench/bench.txt" "$OUT/bench$i.txt"; cat "$S/bench/bench.txt" >> "$OUT/summary.txt"
  else
    echo "(no bench.txt: stopped at the deadline; finished problems from bench$i.log)" >> "$OUT/summary.txt"
  fi
done
# Per finished problem: its best result line, from each run's result.json; then why
# candidates failed where none was correct (from each run's database).
"$KERNELEVOLVE_PYTHON" - "$HV" <<'PY' | tee -a "$OUT/summary.txt"
import json, pathlib, sys
for result in sorted(pathlib.Path(sys.argv[1]).glob("shard*/bench/*/result.json")):
    r = json.loads(result.read_text())
    best, gpu = r.get("best") or {}, r.get("gpu") or {}
    print(f"{result.parent.name}: {r.get('stop_reason')} template={best.get('template')} "
          f"speedup={best.get('speedup_vs_eager')} confirmed={(best.get('confirmed') or {}).get('speedup_vs_eager')} "
          f"vs_compile={gpu.get('best_speedup_vs_torch_compile')}")
PY
"$KERNELEVOLVE_PYTHON" scripts/failed_candidates.py "$HV" "shard*/bench/*/kernelevolve.db" | tee -a "$OUT/summary.txt"
(cd "$HV" && tar czf "$OUT/runs.tgz" --exclude=fixtures --exclude='*.db' shard*/bench/*/best_kernel.py \
  shard*/bench/*/summary.txt shard*/bench/*/result.json shard*/bench/*/logs 2>/dev/null)
log "done in $(( $(date +%s) - START )) s"
