# shellcheck shell=bash disable=SC2034  # START and BIN are read by the scripts sourcing it
# Sourced (never run on its own) by scripts/gpu_level1.sh and scripts/gpu_profile_during.sh:
# the preamble they share on an NVIDIA GPU machine. The caller has set ROOT (this
# checkout, also the current folder) and OUT (an absolute folder for its logs). Sourcing it
#   - sets WORK="${KE_GPU_WORK:-/tmp/ke_gpu_runs}" (run directories) and creates it,
#     exports KERNELEVOLVE_PYTHON (default: python3 on PATH) and PYTHONUNBUFFERED=1, and
#     unsets TRITON_INTERPRET (these runs are on the GPU, not Triton's CPU interpreter);
#   - defines log MESSAGE... (prints "== MESSAGE" and appends it to $OUT/summary.txt)
#     and START (the time it was sourced, seconds since the epoch).
# gpu_bin_setup DEFAULT_MODE then sets BIN to a kernelevolve binary, through the setup of
# scripts/gpu_check.sh alone (its step 2: no pytest, no optimize runs; output in
# $OUT/setup.log, its summary in $OUT/setup/): KE_GPU_BIN (auto | native | prebuilt,
# default DEFAULT_MODE, exported for gpu_check.sh) picks build-gpu/kernelevolve when it is
# not prebuilt and that build exists, else the prebuilt one in ${KE_GPU_DEPS:-.gpu_deps}/bin,
# with $WORK/lib (the libraries gpu_check.sh linked in) put first on LD_LIBRARY_PATH.
# It does not check that BIN works: each caller checks what it needs of it.
WORK="${KE_GPU_WORK:-/tmp/ke_gpu_runs}"
export KERNELEVOLVE_PYTHON="${KERNELEVOLVE_PYTHON:-$(command -v python3)}"
export PYTHONUNBUFFERED=1
unset TRITON_INTERPRET
mkdir -p "$WORK"
log() { echo "== $*" | tee -a "$OUT/summary.txt"; }
START=$(date +%s)

gpu_bin_setup() {
  export KE_GPU_BIN="${KE_GPU_BIN:-$1}"
  KE_GPU_PYTEST=0 KE_GPU_BUDGET=0 KE_GPU_LEVEL1="" bash scripts/gpu_check.sh "$OUT/setup" > "$OUT/setup.log" 2>&1
  if [ "$KE_GPU_BIN" != prebuilt ] && [ -x build-gpu/kernelevolve ]; then
    BIN="$ROOT/build-gpu/kernelevolve"
  else
    BIN="$(cd "${KE_GPU_DEPS:-.gpu_deps}" && pwd)/bin/kernelevolve"
    export LD_LIBRARY_PATH="$WORK/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
}
