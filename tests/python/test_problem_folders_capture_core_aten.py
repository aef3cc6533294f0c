"""problems/core_ops, chains and issue 18's folders (matmul, conv, pool, attention, rnn,
networks): every problem builds, gives same-shaped inputs and outputs for two seeds, and
captures (core_aten.py) into Core ATen ops plus KEEP. Also: SDPA is captured as the one
attention node the attention family fuses, and nn.LSTM as plain ops (no oneDNN layer)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conftest import REPO_ROOT
from kernelevolve_worker import problem_loader
from kernelevolve_worker.core_aten import is_allowed_target
from kernelevolve_worker.graph_capture import capture_graph

FOLDERS = ("core_ops", "chains", "matmul", "conv", "pool", "attention", "rnn", "networks")
PROBLEM_FILES = sorted(p for folder in FOLDERS for p in (REPO_ROOT / "problems" / folder).glob("*.py"))


def test_folders_hold_the_problem_sets() -> None:
    counts = {folder: len(list((REPO_ROOT / "problems" / folder).glob("*.py"))) for folder in FOLDERS}
    assert counts["core_ops"] >= 32 and counts["chains"] >= 12, counts
    heavy = sum(counts[f] for f in ("matmul", "conv", "pool", "attention", "rnn", "networks"))
    assert heavy >= 57, counts  # issue 18: 17 before it, at least 40 new


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


def _targets(folder: str, stem: str) -> dict[str, int]:
    path = REPO_ROOT / "problems" / folder / f"{stem}.py"
    module = problem_loader.import_problem(str(path))
    try:
        model = problem_loader.build_model(module, str(path))
        graph, error = capture_graph(model, problem_loader.make_inputs(module, 0, str(path)))
        assert error is None, error
    finally:
        problem_loader.forget_problem(module)
    counts: dict[str, int] = {}
    for n in graph["nodes"]:
        if n["kind"] == "call":
            counts[n["target"]] = counts.get(n["target"], 0) + 1
    return counts


def test_sdpa_is_captured_whole() -> None:
    targets = _targets("attention", "sdpa_causal")
    assert targets.get("aten._scaled_dot_product_flash_attention_for_cpu.default") == 1, targets
    assert "aten.bmm.default" not in targets and "aten._softmax.default" not in targets, targets


def test_lstm_is_captured_without_onednn() -> None:
    onednn = torch.backends.mkldnn.enabled
    targets = _targets("rnn", "lstm_2layer_output")
    assert not any("mkldnn" in t for t in targets), targets
    assert targets.get("aten.addmm.default", 0) >= 2 * 16, targets  # one per step and layer
    assert torch.backends.mkldnn.enabled == onednn  # restored after tracing
