#!/usr/bin/env bash
# Fresh machine to first result: set up, build, and optimize softmax on the CPU.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
exec build/kernelevolve optimize problems/level1/softmax.py --target cpu --budget 40 \
  --out "runs/softmax-$(date -u +%Y%m%d-%H%M%S)" "$@"
