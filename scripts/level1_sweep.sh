#!/usr/bin/env bash
# Optimizes every problem in a folder (default problems/level1) with `kernelevolve bench`
# and prints its table: outcome, speedup with its interval, roofline fraction, and the
# KernelBench-style totals (docs/bench.md).
# Usage: scripts/level1_sweep.sh [DIR] [extra bench flags...]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-problems/level1}"; shift || true
exec "$ROOT/build/kernelevolve" bench "$DIR" --target cpu "$@"
