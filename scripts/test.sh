#!/usr/bin/env bash
# Runs every test (C++ unit and integration tests, Python worker tests) through ctest.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
ctest --test-dir build --output-on-failure -j 2 "$@"
