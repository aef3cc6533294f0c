#!/usr/bin/env bash
# Suite throughput on an NVIDIA GPU (issue 22 item 4; docs/scale.md "Throughput on one
# machine"): the per-problem fixed cost of `kernelevolve bench --target triton` before
# and after the pooled Python workers, with bench/queue_throughput.sh's two local
# configurations on the same binary:
#   local-fresh  KERNELEVOLVE_WORKER_POOL=0: a problem worker and a GPU runner started
#                (torch imported) for every problem, torch.compile built every time
#   local        one pooled problem worker and one pooled GPU runner for the whole suite
# (No queue configurations: the GPU machine has no hiredis, and queue workers serve
# --target cpu only so far.) Prints the figures; asserts nothing. Goal: fixed cost at
# most 10 s per problem.
#
# Usage (from the checkout root on the GPU machine):
#   export KERNELEVOLVE_PYTHON=python3 KE_DLPACK_INCLUDE_DIR=$PWD/.gpu_deps/include
#   bash scripts/gpu_build.sh build-gpu && bash scripts/gpu_throughput.sh
# Env: KE_TP_CONFIGS (default "local-fresh local"), KE_TP_PROBLEMS (names from
#      problems/level1, default 8 of them; "all" for the 44),
#      KE_TP_BUDGET (4), KE_TP_FLAGS (extra bench flags, default "--seeds 1 --min-time 0.05
#      --confirm-rounds 3", as scripts/gpu_level1.sh), KE_BIN (default build-gpu/kernelevolve).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export KERNELEVOLVE_PYTHON="${KERNELEVOLVE_PYTHON:-python3}"
export PYTHONUNBUFFERED=1
unset TRITON_INTERPRET
export KE_BIN="${KE_BIN:-build-gpu/kernelevolve}"
[ -x "$KE_BIN" ] || { echo "no $KE_BIN: run scripts/gpu_build.sh build-gpu first" >&2; exit 1; }
PROBLEMS="${KE_TP_PROBLEMS:-relu softmax sum_dim layer_norm gelu cumsum argmax_dim mse_loss}"
if [ "$PROBLEMS" = all ]; then
  PROBLEMS=$(ls problems/level1/*.py | xargs -n1 basename | sed 's/\.py$//' | grep -v '^_')
fi
SUITE=$(mktemp -d "${TMPDIR:-/tmp}/ke_gpu_suite.XXXXXX")
trap 'rm -rf "$SUITE"' EXIT
"$KERNELEVOLVE_PYTHON" - "$SUITE" $PROBLEMS <<'PY'
import json, pathlib, shutil, sys
suite, names = pathlib.Path(sys.argv[1]), sys.argv[2:]
sizes = json.loads(pathlib.Path("problems/level1/gpu_sizes.json").read_text())
for n in names:
    shutil.copy(f"problems/level1/{n}.py", suite / f"{n}.py")
(suite / "gpu_sizes.json").write_text(json.dumps({n: sizes[n] for n in names if n in sizes}, indent=1))
PY
echo "$(nvidia-smi -L 2>&1 | head -1); torch $("$KERNELEVOLVE_PYTHON" -c 'import torch; print(torch.__version__)')"
# shellcheck disable=SC2086
CONFIGS="${KE_TP_CONFIGS:-local-fresh local}" bash bench/queue_throughput.sh "$SUITE" "${KE_TP_BUDGET:-4}" --target triton \
  --sizes "$SUITE/gpu_sizes.json" ${KE_TP_FLAGS:---seeds 1 --min-time 0.05 --confirm-rounds 3}
