#!/usr/bin/env bash
# Installs what kernelevolve needs and builds it. Idempotent: a second run only
# checks and rebuilds what changed.
#   - Debian packages through apt (compiler, CMake, JSON/CLI/SQLite/DLPack headers, GoogleTest)
#   - .venv with the pinned Python packages of worker/requirements.txt
#   - CMake build in build/
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

APT_PACKAGES=(g++ cmake make pkg-config python3 python3-venv
  nlohmann-json3-dev libcli11-dev libdlpack-dev libfmt-dev libsqlite3-dev
  libgtest-dev libgmock-dev libseccomp-dev libcurl4-openssl-dev
  libhiredis-dev redis-server  # issue 22: the evaluation queue (--queue, kernelevolve worker) and its test
  chromium)  # headless, for the HTML report's test (tests/integration/report_cli_test.cpp)

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY="${PYTHON:-python3}"
REQ="worker/requirements.txt"
STAMP=".venv/.requirements.sha256"
want="$(sha256sum "$REQ" | cut -d' ' -f1)"
# PyPI's Linux torch wheel brings its CUDA libraries: the installed .venv takes about
# 4.7 GiB and pip holds the downloaded wheels (about 3 GiB) in its temporary folder
# until it has installed them. --no-cache-dir keeps pip from keeping a third copy.
VENV_GIB=5 WHEELS_GIB=3
free_gib() { df -Pk "$1" | awk 'NR==2 { printf "%.1f", $4 / 1048576 }'; }
mount_of() { df -P "$1" | awk 'NR==2 { print $6 }'; }
warn_if_short() {  # DIR NEED_GIB WHAT
  local have; have="$(free_gib "$1")"
  if awk -v h="$have" -v n="$2" 'BEGIN { exit !(h < n) }'; then
    echo "setup: warning: $have GiB free at $1; $3 take about $2 GiB there" \
      "(point TMPDIR at a disk with room for pip's downloads)" >&2
  fi
}
if [[ ! -x .venv/bin/python ]] || [[ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]]; then
  echo "setup: creating .venv with $REQ (first time: a few minutes, torch is large)"
  tmp="${TMPDIR:-/tmp}"
  if [[ "$(mount_of "$ROOT")" == "$(mount_of "$tmp")" ]]; then
    warn_if_short "$ROOT" $((VENV_GIB + WHEELS_GIB)) "the .venv and pip's downloads"
  else
    warn_if_short "$ROOT" "$VENV_GIB" "the .venv's files"
    warn_if_short "$tmp" "$WHEELS_GIB" "pip's downloads (TMPDIR)"
  fi
  [[ -x .venv/bin/python ]] || "$PY" -m venv .venv
  if ! .venv/bin/python -m pip install -q --disable-pip-version-check --no-cache-dir -r "$REQ"; then
    echo "setup: pip could not install $REQ into .venv (free now: $(free_gib "$ROOT") GiB" \
      "at $ROOT, $(free_gib "$tmp") GiB at $tmp; the .venv takes about $VENV_GIB GiB and pip's" \
      "downloads about $WHEELS_GIB GiB more under TMPDIR while it installs)" >&2
    exit 1
  fi
  echo "$want" > "$STAMP"
fi

JOBS="$(nproc)"
if [[ ! -f build/CMakeCache.txt ]]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
mkdir -p build
[[ -x build/kernelevolve ]] ||
  echo "setup: building the C++ tree with $JOBS jobs (first time: 11-22 minutes on 2 cores; log: build/build.log)"
# The build in the background, with its progress (make's last "[ NN%]") once a minute, so
# a first build is not twenty silent minutes.
cmake --build build -j "$JOBS" >build/build.log 2>&1 &
build_pid=$!
ticks=0
while kill -0 "$build_pid" 2>/dev/null; do
  sleep 2
  ticks=$((ticks + 1))
  if ((ticks % 30 == 0)) && kill -0 "$build_pid" 2>/dev/null; then
    echo "setup: building, $(grep -o '\[ *[0-9]*%\]' build/build.log | tail -n 1 || true) (log: build/build.log)"
  fi
done
if ! wait "$build_pid"; then
  tail -n 40 build/build.log >&2
  echo "setup: build failed (full log: build/build.log)" >&2
  exit 1
fi
echo "setup: ready (build/kernelevolve)"
