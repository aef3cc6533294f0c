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
  libgtest-dev libgmock-dev libseccomp-dev libcurl4-openssl-dev)

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
if [[ ! -x .venv/bin/python ]] || [[ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]]; then
  echo "setup: creating .venv with $REQ (first time: a few minutes, torch is large)"
  [[ -x .venv/bin/python ]] || "$PY" -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check -r "$REQ"
  echo "$want" > "$STAMP"
fi

JOBS="$(nproc)"
if [[ ! -f build/CMakeCache.txt ]]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
mkdir -p build
if ! cmake --build build -j "$JOBS" >build/build.log 2>&1; then
  tail -n 40 build/build.log >&2
  echo "setup: build failed (full log: build/build.log)" >&2
  exit 1
fi
echo "setup: ready (build/kernelevolve)"
