# Sourced (not run) by the scripts/check_*_gpu.sh checks, from the repository root:
#
#   source scripts/gpu_check_env.sh TEMP_PREFIX DEFAULT_BIN [OUT]
#
# Sets BIN (KE_BIN, else DEFAULT_BIN), PY (KE_PYTHON, else .venv/bin/python, else python3)
# and OUT (the folder given, created; else a new folder TEMP_PREFIX.XXXXXX under TMPDIR or
# /tmp). Exits 2, with the reason, when BIN is not built or torch sees no CUDA GPU.
BIN=${KE_BIN:-$2}
PY=${KE_PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
OUT=${3:-$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")}
mkdir -p "$OUT"
[ -x "$BIN" ] || { echo "no $BIN: run scripts/gpu_build.sh build-gpu first (or set KE_BIN)"; exit 2; }
"$PY" -c 'import sys, torch, triton; sys.exit(0 if torch.cuda.is_available() else "no CUDA GPU visible to torch")' || exit 2
