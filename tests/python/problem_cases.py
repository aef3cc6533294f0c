"""Shared helpers for the problem-suite tests (test_problems_level1.py, test_problems_level2.py).

Each problem gets a ``Case``: small ``--set`` overrides and an independent formula
written from the definition in the file's docstring (not the torch call the file
uses), evaluated in float64 on the tensors read back from the fixture files. The
check loads the problem through the worker, then compares every seed file and every
edge-case file (edge_cases.py) with the formula.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch
from safetensors.torch import load_file

from conftest import WorkerProcess, load_params

Params = dict[str, torch.Tensor]
Formula = Callable[[list[torch.Tensor], Params], torch.Tensor]

ALL_EDGE_SETS = ("zeros", "negative", "large", "tiny")


@dataclass(frozen=True)
class Case:
    """How to check one problem.

    formula: (forward() arguments, params by state_dict key without "param.") -> the
        expected output.0; float inputs and params arrive as float64, integer and bool
        ones unchanged. A float64 result is compared with tolerance, any other dtype
        exactly (argmax).
    overrides: ``--set`` values giving small, valid shapes.
    edge_unchecked: edge sets on which the float32 reference differs from the exact
        formula by design (e.g. squares underflowing to 0), name -> why; the file must
        still be written, only the comparison is left out.
    """

    formula: Formula
    overrides: dict[str, str]
    rtol: float = 1e-5
    atol: float = 1e-5
    edge_unchecked: dict[str, str] = field(default_factory=dict)


# Small shapes shared by problems of the same layout (each under a millisecond).
ROWS = {"batch_size": "3", "dim": "40"}
ROWS_HIDDEN = {"batch_size": "3", "hidden": "40"}
CUBE = {"batch_size": "2", "dim1": "5", "dim2": "7"}
IMAGE = {"batch_size": "2", "features": "6", "dim1": "3", "dim2": "4"}
SEQUENCE = {"batch_size": "3", "length": "50"}

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
SELU_ALPHA, SELU_SCALE = 1.6732632423543772, 1.0507009873554805


# --- elementwise definitions, written so they stay exact at 1e4 (no inf - inf, inf / inf) ---

def sigmoid(x: torch.Tensor) -> torch.Tensor:
    """1 / (1 + e^-x)."""
    return 1 / (1 + torch.exp(-x))


def silu(x: torch.Tensor) -> torch.Tensor:
    """x * sigmoid(x), as x / (1 + e^-x)."""
    return x / (1 + torch.exp(-x))


def tanh(x: torch.Tensor) -> torch.Tensor:
    """(e^2x - 1) / (e^2x + 1), rewritten as 1 - 2 / (e^2x + 1)."""
    return 1 - 2 / (torch.exp(2 * x) + 1)


def gelu(x: torch.Tensor) -> torch.Tensor:
    """x * Phi(x) = 0.5 x (1 + erf(x / sqrt 2))."""
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2.0)))


def relu(x: torch.Tensor) -> torch.Tensor:
    return torch.where(x > 0, x, torch.zeros_like(x))


def clamp(x: torch.Tensor, low: float, high: float) -> torch.Tensor:
    """min(max(x, low), high) by comparison."""
    x = torch.where(x < low, torch.full_like(x, low), x)
    return torch.where(x > high, torch.full_like(x, high), x)


# --- reductions by explicit loops and sums ---

def reduce_max(x: torch.Tensor, dim: int) -> torch.Tensor:
    """max along ``dim`` by pairwise comparison."""
    return functools.reduce(lambda a, b: torch.where(b > a, b, a), x.unbind(dim))


def reduce_min(x: torch.Tensor, dim: int) -> torch.Tensor:
    """min along ``dim`` by pairwise comparison."""
    return functools.reduce(lambda a, b: torch.where(b < a, b, a), x.unbind(dim))


def reduce_sum(x: torch.Tensor, dim: int) -> torch.Tensor:
    """sum along ``dim`` by adding the slices one at a time."""
    return functools.reduce(torch.add, x.unbind(dim))


def reduce_prod(x: torch.Tensor, dim: int) -> torch.Tensor:
    """product along ``dim`` by multiplying the slices one at a time."""
    return functools.reduce(torch.mul, x.unbind(dim))


def arg_extreme(x: torch.Tensor, dim: int, better: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """Index along ``dim`` of the first element that no later one beats (strict
    comparison, so ties keep the first index); int64."""
    slices = x.unbind(dim)
    best, index = slices[0], torch.zeros(slices[0].shape, dtype=torch.int64)
    for i, candidate in enumerate(slices[1:], start=1):
        wins = better(candidate, best)
        best = torch.where(wins, candidate, best)
        index = torch.where(wins, torch.full_like(index, i), index)
    return index


def mean_over(x: torch.Tensor, dims: tuple[int, ...]) -> torch.Tensor:
    """(1/n) sum over ``dims``, keepdim."""
    count = math.prod(x.shape[d] for d in dims)
    return x.sum(dim=dims, keepdim=True) / count


def standardize(x: torch.Tensor, dims: tuple[int, ...], eps: float) -> torch.Tensor:
    """(x - mean) / sqrt(biased variance + eps) over ``dims``."""
    centered = x - mean_over(x, dims)
    return centered / torch.sqrt(mean_over(centered * centered, dims) + eps)


def softmax(x: torch.Tensor, dim: int) -> torch.Tensor:
    """e^x / sum e^x, with the max subtracted first (same value, no overflow)."""
    e = torch.exp(x - reduce_max(x, dim).unsqueeze(dim))
    return e / e.sum(dim=dim, keepdim=True)


def logsumexp(x: torch.Tensor, dim: int) -> torch.Tensor:
    """log sum e^x = m + log sum e^(x - m), keepdim."""
    m = reduce_max(x, dim).unsqueeze(dim)
    return m + torch.log(torch.exp(x - m).sum(dim=dim, keepdim=True))


def prefix_matrix(length: int, inclusive: bool = True, reverse: bool = False) -> torch.Tensor:
    """U with y = x @ U a prefix sum over the last dim: U[j, i] = 1 when j <= i
    (j < i exclusive; j >= i reverse), float64."""
    ones = torch.ones(length, length, dtype=torch.float64)
    if reverse:
        return torch.tril(ones)
    return torch.triu(ones, diagonal=0 if inclusive else 1)


def channel(v: torch.Tensor, ndim: int) -> torch.Tensor:
    """A per-channel vector shaped to broadcast over dim 1 of an ``ndim``-D tensor."""
    return v.view(1, -1, *([1] * (ndim - 2)))


# --- reading fixtures back and comparing ---

def split_fixture(tensors: dict[str, torch.Tensor]) -> tuple[list[torch.Tensor], Params, list[torch.Tensor]]:
    """(inputs in ABI order, params by key, outputs in ABI order); floats as float64."""
    def widen(t: torch.Tensor) -> torch.Tensor:
        return t.double() if t.is_floating_point() else t

    def ordered(prefix: str) -> list[torch.Tensor]:
        count = sum(1 for k in tensors if k.startswith(prefix))
        return [tensors[f"{prefix}{i}"] for i in range(count)]

    params = {k.removeprefix("param."): widen(t) for k, t in tensors.items() if k.startswith("param.")}
    return [widen(t) for t in ordered("input.")], params, ordered("output.")


def assert_matches(case: Case, tensors: dict[str, torch.Tensor], where: str) -> None:
    """output.0 of one fixture file equals the case's formula on its inputs and params."""
    inputs, params, outputs = split_fixture(tensors)
    assert len(outputs) == 1, where
    expected = case.formula(inputs, params)
    actual = outputs[0]
    if expected.is_floating_point():
        assert actual.dtype == torch.float32, where
        # The exact result rounded to float32: beyond its range it becomes inf or 0, as a
        # float32 reference's does (cumprod of 1e4-scaled inputs).
        expected = expected.float().double()
        torch.testing.assert_close(actual.double(), expected, rtol=case.rtol, atol=case.atol, equal_nan=True,
                                   msg=lambda m: f"{where}: {m}")
    else:
        assert actual.dtype == expected.dtype and torch.equal(actual, expected), f"{where}: {actual} vs {expected}"


def declared_edge_sets(path: Path) -> list[str]:
    """The problem file's EDGE_CASES (every set when it declares none)."""
    spec = importlib.util.spec_from_file_location(f"edge_sets_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return list(getattr(module, "EDGE_CASES", ALL_EDGE_SETS))


def check_problem(worker: WorkerProcess, path: Path, case: Case, fixtures_dir: Path) -> dict:
    """Loads ``path`` with the case's overrides (seeds 0 and 1), then compares every seed
    file and every edge-case file with the formula. Returns the load_problem result."""
    result = worker.call("load_problem", load_params(path, fixtures_dir, seeds=[0, 1], overrides=case.overrides))
    assert result["name"] == path.stem
    assert result["graph_error"] is None and result["memory_check"] == "ok"
    for file in result["fixture_files"]:
        assert_matches(case, load_file(file), f"{path.stem} {Path(file).name}")
    manifest = json.loads(Path(result["manifest_path"]).read_text())
    written = {e["name"] for e in manifest["edge_cases"]}
    skipped = {e["name"] for e in manifest["edge_skipped"]}
    assert written | skipped == set(declared_edge_sets(path)) and not written & skipped, manifest
    for entry in manifest["edge_cases"]:
        if entry["name"] not in case.edge_unchecked:
            tensors = load_file(str(Path(result["fixtures_dir"]) / entry["file"]))
            assert_matches(case, tensors, f"{path.stem} {entry['file']}")
    return result


def default_set_bytes(path: Path) -> int:
    """Bytes of one input set (inputs + params + outputs) at the file's default sizes."""
    from kernelevolve_worker.memory_check import measure_on_meta

    spec = importlib.util.spec_from_file_location(f"size_check_{path.parent.name}_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return sum(s.nbytes for s in measure_on_meta(module))
