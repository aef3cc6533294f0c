#!/usr/bin/env bash
# Runs every test (C++ unit and integration tests, Python worker tests) through ctest,
# except the GPU-only ones (label gpu).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
# Label gpu (tests/gpu) needs an NVIDIA GPU: scripts/gpu_check.sh runs it there.
ctest --test-dir build --output-on-failure -j 2 -LE gpu "$@"
