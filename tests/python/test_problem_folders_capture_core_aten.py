"""problems/core_ops and problems/chains: every problem builds, gives same-shaped inputs
and outputs for two seeds, and captures (core_aten.py) into Core ATen ops plus KEEP."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conftest import REPO_ROOT
from kernelevolve_worker import problem_loader
from kernelevolve_worker.core_aten import is_allowed_target
from kernelevolve_worker.graph_capture import capture_graph

FOLDERS = ("core_ops", "chains")
PROBLEM_FILES = sorted(p for folder in FOLDERS for p in (REPO_ROOT / "problems" / folder).glob("*.py"))


def test_folders_hold_the_problem_sets() -> None:
    counts = {folder: len(list((REPO_ROOT / "problems" / folder).glob("*.py"))) for folder in FOLDERS}
    assert counts["core_ops"] >= 32 and counts["chains"] >= 12, counts


def _signature(tensors: list[torch.Tensor]) -> list[tuple[list[int], torch.dtype]]:
    return [(list(t.shape), t.dtype) for t in tensors]


@pytest.mark.parametrize("path", PROBLEM_FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_problem_captures_core_aten(path: Path) -> None:
    module = problem_loader.import_problem(str(path))
    try:
        model = problem_loader.build_model(module, str(path))
        first = problem_loader.make_inputs(module, 0, str(path))
        second = problem_loader.make_inputs(module, 1, str(path))
        assert _signature(first) == _signature(second)
        outputs = problem_loader.run_reference(model, first, str(path))
        assert _signature(outputs) == _signature(problem_loader.run_reference(model, second, str(path)))
        graph, error = capture_graph(model, first)
        assert error is None, error
        targets = {n["target"] for n in graph["nodes"] if n["kind"] == "call"}
        assert sorted(t for t in targets if not is_allowed_target(t)) == []
        inputs = {n["name"] for n in graph["nodes"] if n["kind"] != "call"}
        assert not set(graph["outputs"]) & inputs, "an output is an input itself"
    finally:
        problem_loader.forget_problem(module)
