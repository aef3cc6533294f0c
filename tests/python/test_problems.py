"""Every problems/level1 file loads, and its fixtures match the math it documents."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

import pytest
import torch
from safetensors.torch import load_file

from conftest import PROBLEMS_DIR, WorkerProcess, load_params

# Independent formulas (written from the definitions, not the torch call the file uses).
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805
EXPECTED: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "relu": lambda x: torch.where(x > 0, x, torch.zeros_like(x)),
    "leaky_relu": lambda x: torch.where(x >= 0, x, 0.01 * x),
    "gelu": lambda x: 0.5 * x * (1 + torch.erf(x / math.sqrt(2.0))),
    "gelu_tanh": lambda x: 0.5 * x * (1 + torch.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3))),
    "sigmoid": lambda x: 1 / (1 + torch.exp(-x)),
    "tanh": lambda x: (torch.exp(2 * x) - 1) / (torch.exp(2 * x) + 1),
    "silu": lambda x: x / (1 + torch.exp(-x)),
    "swish": lambda x: x / (1 + torch.exp(-x)),
    "softplus": lambda x: torch.log1p(torch.exp(x)),
    "elu": lambda x: torch.where(x > 0, x, torch.exp(x) - 1),
    "selu": lambda x: SELU_SCALE * torch.where(x > 0, x, SELU_ALPHA * (torch.exp(x) - 1)),
    "hardtanh": lambda x: x.clamp(-1.0, 1.0),
    "hardsigmoid": lambda x: (x / 6 + 0.5).clamp(0.0, 1.0),
    "softsign": lambda x: x / (1 + x.abs()),
    "softmax": lambda x: torch.exp(x) / torch.exp(x).sum(dim=1, keepdim=True),
    "log_softmax": lambda x: x - torch.log(torch.exp(x).sum(dim=1, keepdim=True)),
}


def test_every_problem_file_has_an_expected_formula() -> None:
    assert sorted(p.stem for p in PROBLEMS_DIR.glob("*.py")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_problem_loads_and_matches_its_formula(worker: WorkerProcess, tmp_path: Path, name: str) -> None:
    params = load_params(PROBLEMS_DIR / f"{name}.py", tmp_path, seeds=[0, 1],
                         overrides={"batch_size": "3", "dim": "40"})
    result = worker.call("load_problem", params)
    assert result["name"] == name
    assert result["inputs"][0]["shape"] == [3, 40] and result["outputs"][0]["shape"] == [3, 40]
    assert result["graph_error"] is None and result["memory_check"] == "ok"
    for file in result["fixture_files"]:
        tensors = load_file(file)
        x = tensors["input.0"].double()
        torch.testing.assert_close(tensors["output.0"].double(), EXPECTED[name](x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_default_sizes_fit_a_small_budget(name: str) -> None:
    """Default sizes are CPU-sized: one input set stays under 32 MB."""
    import importlib.util

    from kernelevolve_worker.memory_check import measure_on_meta

    spec = importlib.util.spec_from_file_location(f"size_check_{name}", PROBLEMS_DIR / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert sum(s.nbytes for s in measure_on_meta(module)) <= 32 * 10**6
