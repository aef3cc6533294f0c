#!/usr/bin/env bash
# Optimizes every problem in a folder (default problems/level1) and prints one line
# per problem: status, search speedup, confirmed speedup with its interval.
# Usage: scripts/level1_sweep.sh [DIR] [extra optimize flags...]
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-problems/level1}"; shift || true
OUT="runs/sweep-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$ROOT/$OUT"
printf "%-14s %-22s %8s %10s %22s %s\n" problem status search confirmed "ci95" verdict
for f in "$ROOT/$DIR"/*.py; do
  name="$(basename "$f" .py)"
  "$ROOT/build/kernelevolve" optimize "$f" --out "$ROOT/$OUT/$name" --quiet "$@" >"$ROOT/$OUT/$name.stdout" 2>"$ROOT/$OUT/$name.stderr"
  "$ROOT/.venv/bin/python" - "$ROOT/$OUT/$name/result.json" "$name" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]:<14} missing result.json ({e})"); sys.exit(0)
b = d.get("best") or {}
c = b.get("confirmed") or {}
ci = c.get("ci95") or [0, 0]
verdict = "faster" if c.get("clearly_faster") else "-"
print(f"{d['problem']:<14} {d['status'] + '/' + d['stop_reason']:<22} {b.get('speedup_vs_eager', 0):7.2f}x "
      f"{c.get('speedup_vs_eager', 0):9.2f}x   [{ci[0]:6.2f}, {ci[1]:6.2f}]     {verdict}")
PY
done
echo "runs in $OUT"
