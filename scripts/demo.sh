#!/usr/bin/env bash
# Fresh machine to first result: set up, build, and optimize softmax on the CPU.
# Extra arguments go to `kernelevolve optimize`; --budget and --out given there replace
# the demo's defaults (40 evaluations, runs/softmax-<UTC time>).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
args=()
have() { local a; for a in "${@:2}"; do [[ "$a" == "$1" || "$a" == "$1="* ]] && return 0; done; return 1; }
have --budget "$@" || args+=(--budget 40)
have --out "$@" || args+=(--out "runs/softmax-$(date -u +%Y%m%d-%H%M%S)")
exec build/kernelevolve optimize problems/level1/softmax.py --target cpu "${args[@]}" "$@"
