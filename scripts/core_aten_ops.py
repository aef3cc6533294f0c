#!/usr/bin/env python3
"""Prints the Core ATen opset of the installed torch as JSON, optionally with the
problems whose captured graph uses each op (the source of the docs' coverage table).

The opset is every ATen overload tagged torch.Tag.core
(https://docs.pytorch.org/docs/stable/torch.compiler_ir.html), grouped by operator:

    {"torch": "2.11.0+cu130",
     "ops": [{"name": "aten.abs", "overloads": ["default"]}, ...]}

With --problems DIR..., every *.py problem under each DIR is loaded (seed-0 inputs) and
captured as the worker does (worker/kernelevolve_worker/graph_capture.py, into Core ATen
plus core_aten.KEEP); every op entry then has "problems": ["level1/relu", ...] (DIR's
name / file stem) naming the problems whose graph calls one of its overloads. Non-core
targets seen in a graph (the KEEP ops, or anything else) are listed under "non_core"
with "kept" (in core_aten.KEEP) and their "problems"; problems that fail to load or
capture are listed under "errors" with the reason.

Capture runs the reference for real, at the file's sizes; --shrink first sets every
module-level int constant >= 128 to 64 (graphs do not depend on those sizes, and
a GPU-sized file would take minutes on a CPU).

Usage:
    .venv/bin/python scripts/core_aten_ops.py > core_aten.json
    .venv/bin/python scripts/core_aten_ops.py --shrink --problems problems/level1 \\
        problems/level2 problems/core_ops problems/chains
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT / "worker"))

import torch  # noqa: E402

from kernelevolve_worker import problem_loader  # noqa: E402
from kernelevolve_worker.core_aten import KEEP, core_aten_opset, is_core, out_of_place  # noqa: E402
from kernelevolve_worker.graph_capture import capture_graph  # noqa: E402
from kernelevolve_worker.protocol import ProblemError  # noqa: E402

SHRINK_FROM = 128
SHRINK_TO = 64


def problem_targets(path: Path, shrink: bool) -> tuple[set[str] | None, str | None]:
    """The call targets of one problem's captured graph ("getitem" left out), or
    (None, reason) when it cannot be loaded or captured."""
    try:
        module = problem_loader.import_problem(str(path))
    except ProblemError as exc:
        return None, str(exc)
    try:
        if shrink:
            for name, value in problem_loader.module_constants(module).items():
                if type(value) is int and value >= SHRINK_FROM:
                    setattr(module, name, SHRINK_TO)
        model = problem_loader.build_model(module, str(path))
        inputs = problem_loader.make_inputs(module, 0, str(path))
        graph, error = capture_graph(model, inputs)
    except ProblemError as exc:
        return None, str(exc)
    finally:
        problem_loader.forget_problem(module)
    if graph is None:
        return None, error
    return {n["target"] for n in graph["nodes"] if n["kind"] == "call" and n["target"] != "getitem"}, None


def report(problem_dirs: list[Path], shrink: bool) -> dict[str, Any]:
    """The JSON document (module docstring)."""
    doc: dict[str, Any] = {"torch": torch.__version__,
                           "ops": [{"name": name, "overloads": overloads} for name, overloads in core_aten_opset()]}
    if not problem_dirs:
        return doc
    users: dict[str, set[str]] = {}       # "aten.add" -> problems
    non_core: dict[str, set[str]] = {}    # "aten.silu.default" -> problems
    errors = []
    for directory in problem_dirs:
        for path in sorted(directory.glob("*.py")):
            problem = f"{directory.name}/{path.stem}"
            targets, error = problem_targets(path, shrink)
            if targets is None:
                errors.append({"problem": problem, "error": error})
                continue
            for target in targets:
                if is_core(target):
                    users.setdefault(target.rsplit(".", 1)[0], set()).add(problem)
                else:
                    non_core.setdefault(target, set()).add(problem)
    for entry in doc["ops"]:
        entry["problems"] = sorted(users.get(entry["name"], ()))
    packets: dict[str, dict[str, Any]] = {}
    for target in sorted(non_core):
        name, _, overload = target.rpartition(".")
        entry = packets.setdefault(name, {"name": name, "overloads": [], "kept": [], "out_of_place": {},
                                          "problems": set()})
        entry["overloads"].append(overload)
        if target in KEEP:
            entry["kept"].append(overload)
        if (twin := out_of_place(target)) is not None:
            entry["out_of_place"][overload] = twin
        entry["problems"] |= non_core[target]
    doc["non_core"] = [{**e, "problems": sorted(e["problems"])} for e in packets.values()]
    doc["errors"] = errors
    return doc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", nargs="+", type=Path, default=[], metavar="DIR",
                        help="problem folders to capture (each *.py in them)")
    parser.add_argument("--shrink", action="store_true",
                        help=f"set module-level int constants >= {SHRINK_FROM} to {SHRINK_TO} before capturing")
    args = parser.parse_args()
    for directory in args.problems:
        if not directory.is_dir():
            parser.error(f"--problems {directory}: not a directory")
    json.dump(report(args.problems, args.shrink), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
