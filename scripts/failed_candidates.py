"""Why candidates failed, for every run of a bench that found no correct kernel.

    python3 scripts/failed_candidates.py BENCH_ROOT [GLOB]

Reads each run's database (GLOB under BENCH_ROOT, default "*/kernelevolve.db": a
`kernelevolve bench --out` folder) and, for a run none of whose evaluations is "ok",
prints the run's folder name and its first three evaluations (node, status, message cut
to 300 characters). Used by scripts/gpu_recsys.sh and scripts/gpu_heavy.sh on the GPU
machine, where sqlite3 has no command-line tool.
"""

from __future__ import annotations

import pathlib
import sqlite3
import sys


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    pattern = sys.argv[2] if len(sys.argv) > 2 else "*/kernelevolve.db"
    for db in sorted(root.glob(pattern)):
        rows = sqlite3.connect(db).execute("SELECT node_id, status, message FROM evaluations").fetchall()
        if rows and not any(status == "ok" for _, status, _ in rows):
            print(f"{db.parent.name}: no correct candidate:")
            for node, status, message in rows[:3]:
                print(f"  node {node} {status}: {message[:300]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
