"""Every problems/level2 file (short operator chains) loads, and its fixtures (seed and
edge-case sets) match an independent formula written from its docstring (problem_cases.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conftest import REPO_ROOT, WorkerProcess
from problem_cases import (IMAGE, ROWS, ROWS_HIDDEN, Case, channel, check_problem, clamp, default_set_bytes, gelu,
                           mean_over, reduce_sum, relu, sigmoid, silu, softmax, standardize, tanh)

LEVEL2_DIR = REPO_ROOT / "problems" / "level2"

# Overridden away from the file defaults (2.0, 0.75, 0.125) to show the constant reaches the model.
TANH_SCALE, CLAMP_SCALE, SOFTMAX_SCALE = 3.0, 0.5, 0.25
NORMALIZE_EPS = 1e-12


def rms_norm(h: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """h / sqrt(mean(h^2) + eps) * weight over the last dim."""
    return h / torch.sqrt(mean_over(h * h, (h.dim() - 1,)) + eps) * weight


def layer_norm(x: torch.Tensor, p: dict) -> torch.Tensor:
    """LayerNorm over the last dim, eps 1e-5, affine ln.weight / ln.bias."""
    return standardize(x, (x.dim() - 1,), 1e-5) * p["ln.weight"] + p["ln.bias"]


def row_l2_normalize(x: torch.Tensor) -> torch.Tensor:
    """x / max(||x||_2, eps) per row (F.normalize's definition)."""
    norm = torch.sqrt((x * x).sum(dim=1, keepdim=True))
    return x / torch.where(norm > NORMALIZE_EPS, norm, torch.full_like(norm, NORMALIZE_EPS))


def batch_norm(x: torch.Tensor, p: dict) -> torch.Tensor:
    """(x - running_mean) / sqrt(running_var + 1e-5) * weight + bias, per channel."""
    return ((x - channel(p["running_mean"], 4)) / torch.sqrt(channel(p["running_var"], 4) + 1e-5)
            * channel(p["weight"], 4) + channel(p["bias"], 4))


def group_norm(x: torch.Tensor, p: dict, groups: int) -> torch.Tensor:
    y = standardize(x.reshape(x.shape[0], groups, -1), (2,), 1e-5).reshape(x.shape)
    return y * channel(p["gn.weight"], 4) + channel(p["gn.bias"], 4)


CASES: dict[str, Case] = {
    "batch_norm_relu": Case(lambda ins, p: relu(batch_norm(ins[0], p)), IMAGE),
    "bias_tanh_scale": Case(lambda ins, p: tanh(ins[0] + p["bias"]) * TANH_SCALE,
                            dict(ROWS_HIDDEN, scale=str(TANH_SCALE))),
    "group_norm_silu": Case(lambda ins, p: silu(group_norm(ins[0], p, 2)), dict(IMAGE, num_groups="2")),
    "layer_norm_gelu": Case(lambda ins, p: gelu(layer_norm(ins[0], p)), ROWS_HIDDEN),
    # On the tiny set the exact norm (~1e-29) is below eps too, so float32 underflow does not show.
    "normalize_scale": Case(lambda ins, p: row_l2_normalize(ins[0]) * p["gain"], ROWS_HIDDEN),
    "residual_rms_norm": Case(lambda ins, p: rms_norm(ins[0] + ins[1], p["weight"], 1e-6), ROWS_HIDDEN),
    "scale_clamp_sum": Case(lambda ins, p: reduce_sum(clamp(ins[0] * CLAMP_SCALE, -1.0, 1.0), 1),
                            dict(ROWS, scale=str(CLAMP_SCALE))),
    "scaled_bias_softmax": Case(lambda ins, p: softmax(ins[0] * SOFTMAX_SCALE + p["bias"], 1),
                                dict(ROWS_HIDDEN, scale=str(SOFTMAX_SCALE))),
    "swiglu_rms_norm": Case(lambda ins, p: rms_norm(ins[0] * sigmoid(ins[0]) * ins[1], p["weight"], 1e-6),
                            ROWS_HIDDEN),
    "swish_bias_layer_norm": Case(lambda ins, p: layer_norm(ins[0] * sigmoid(ins[0]) + p["bias"], p), ROWS_HIDDEN),
}


def test_every_level2_problem_has_a_case() -> None:
    assert sorted(p.stem for p in LEVEL2_DIR.glob("*.py")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_level2_problem_matches_its_formula(worker: WorkerProcess, tmp_path: Path, name: str) -> None:
    check_problem(worker, LEVEL2_DIR / f"{name}.py", CASES[name], tmp_path)


@pytest.mark.parametrize("name", sorted(CASES))
def test_default_sizes_fit_a_small_budget(name: str) -> None:
    """Default sizes are CPU-sized: one input set stays under 32 MB."""
    assert default_set_bytes(LEVEL2_DIR / f"{name}.py") <= 32 * 10**6
