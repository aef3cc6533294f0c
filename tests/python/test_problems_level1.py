"""Every problems/level1 file loads, and its fixtures (seed and edge-case sets) match an
independent formula written from its docstring (problem_cases.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from conftest import PROBLEMS_DIR, WorkerProcess
from problem_cases import (CUBE, IMAGE, ROWS, SELU_ALPHA, SELU_SCALE, SEQUENCE, SQRT_2_OVER_PI, Case, arg_extreme,
                           channel, check_problem, clamp, default_set_bytes, gelu, logsumexp, mean_over,
                           prefix_matrix, reduce_max, reduce_min, reduce_prod, reduce_sum, relu, sigmoid, silu,
                           softmax, standardize, tanh)

# Overridden away from the defaults (1.0, 0.01) to show the constant reaches the model.
ELU_ALPHA, LEAKY_SLOPE = 0.5, 0.2
NORM_EPS = 1e-5
# float32 squares of 1e-30-scaled inputs underflow to 0, so the reference divides by 0
# where the exact norm is tiny but positive.
UNDERFLOW = {"tiny": "x^2 underflows to 0 in float32, the reference divides by 0"}


def elementwise(fn, extra: dict[str, str] | None = None) -> Case:
    """A Case for a [batch_size, dim] -> same-shape elementwise problem (``extra``: more overrides)."""
    return Case(lambda ins, p: fn(ins[0]), dict(ROWS, **(extra or {})))


def loss(fn) -> Case:
    """A Case for mean-of-elementwise losses of (predictions, targets)."""
    return Case(lambda ins, p: fn(ins[0], ins[1]).sum() / ins[0].numel(), ROWS)


def huber(d: torch.Tensor, delta: float) -> torch.Tensor:
    return torch.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))


def smooth_l1(d: torch.Tensor, beta: float) -> torch.Tensor:
    return torch.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """mean_b(logsumexp(x[b]) - x[b, t[b]]), the picked logit by a one-hot mask."""
    one_hot = torch.arange(logits.shape[1]).unsqueeze(0) == targets.unsqueeze(1)
    picked = torch.where(one_hot, logits, torch.zeros_like(logits)).sum(dim=1)
    return (logsumexp(logits, 1).squeeze(1) - picked).sum() / logits.shape[0]


def kl_div(p: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """sum(t (log t - log p)) / batch, with 0 log 0 = 0."""
    terms = torch.where(t > 0, t * (torch.log(t) - torch.log(p)), torch.zeros_like(t))
    return terms.sum() / p.shape[0]


def cumprod(x: torch.Tensor) -> torch.Tensor:
    """Running product over dim 1, one column at a time."""
    columns, running = [], torch.ones_like(x[:, 0])
    for column in x.unbind(1):
        running = running * column
        columns.append(running)
    return torch.stack(columns, dim=1)


def group_norm(x: torch.Tensor, p: dict, groups: int) -> torch.Tensor:
    grouped = x.reshape(x.shape[0], groups, -1)
    y = standardize(grouped, (2,), NORM_EPS).reshape(x.shape)
    return y * channel(p["gn.weight"], 4) + channel(p["gn.bias"], 4)


CASES: dict[str, Case] = {
    # Activations.
    "relu": elementwise(relu),
    "leaky_relu": elementwise(lambda x: torch.where(x >= 0, x, LEAKY_SLOPE * x),
                              extra={"negative_slope": str(LEAKY_SLOPE)}),
    "gelu": elementwise(gelu),
    "gelu_tanh": elementwise(lambda x: 0.5 * x * (1 + tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))),
    "sigmoid": elementwise(sigmoid),
    "tanh": elementwise(tanh),
    "silu": elementwise(silu),
    "swish": elementwise(silu),
    "softplus": elementwise(lambda x: torch.where(x > 20, x, torch.log1p(torch.exp(x)))),
    "elu": elementwise(lambda x: torch.where(x > 0, x, ELU_ALPHA * (torch.exp(x) - 1)),
                       extra={"alpha": str(ELU_ALPHA)}),
    "selu": elementwise(lambda x: SELU_SCALE * torch.where(x > 0, x, SELU_ALPHA * (torch.exp(x) - 1))),
    "hardtanh": elementwise(lambda x: clamp(x, -1.0, 1.0)),
    "hardsigmoid": elementwise(lambda x: clamp(x / 6 + 0.5, 0.0, 1.0)),
    "softsign": elementwise(lambda x: x / (1 + x.abs())),
    "softmax": elementwise(lambda x: softmax(x, 1)),
    "log_softmax": elementwise(lambda x: x - logsumexp(x, 1)),
    "softmax_channels": Case(lambda ins, p: softmax(ins[0], 1),
                             {"batch_size": "2", "channels": "5", "length": "6"}),
    # Reductions.
    "amax_lastdim": Case(lambda ins, p: reduce_max(ins[0], -1), ROWS, rtol=0, atol=0),
    "max_dim": Case(lambda ins, p: reduce_max(ins[0], 1), CUBE, rtol=0, atol=0),
    "min_dim": Case(lambda ins, p: reduce_min(ins[0], 2), CUBE, rtol=0, atol=0),
    "argmax_dim": Case(lambda ins, p: arg_extreme(ins[0], 1, torch.gt), CUBE),
    "argmin_dim": Case(lambda ins, p: arg_extreme(ins[0], 2, torch.lt), CUBE),
    "sum_dim": Case(lambda ins, p: reduce_sum(ins[0], 1).unsqueeze(1), CUBE),
    "mean_dim": Case(lambda ins, p: reduce_sum(ins[0], 1) / ins[0].shape[1], CUBE),
    "prod_dim": Case(lambda ins, p: reduce_prod(ins[0], 1), CUBE),
    # Normalizations.
    "batch_norm": Case(lambda ins, p: (ins[0] - channel(p["running_mean"], 4))
                       / torch.sqrt(channel(p["running_var"], 4) + NORM_EPS)
                       * channel(p["weight"], 4) + channel(p["bias"], 4), IMAGE),
    "layer_norm": Case(lambda ins, p: standardize(ins[0], (1, 2, 3), NORM_EPS) * p["ln.weight"] + p["ln.bias"],
                       IMAGE),
    "instance_norm": Case(lambda ins, p: standardize(ins[0], (2, 3), NORM_EPS), IMAGE),
    "group_norm": Case(lambda ins, p: group_norm(ins[0], p, 3), dict(IMAGE, num_groups="3")),
    "rms_norm": Case(lambda ins, p: ins[0] / torch.sqrt(mean_over(ins[0] * ins[0], (1,)) + NORM_EPS), IMAGE),
    "l1_norm": Case(lambda ins, p: ins[0] / ins[0].abs().sum(dim=1, keepdim=True), ROWS),
    "l2_norm": Case(lambda ins, p: ins[0] / torch.sqrt((ins[0] * ins[0]).sum(dim=1, keepdim=True)), ROWS,
                    edge_unchecked=UNDERFLOW),
    "frobenius_norm": Case(lambda ins, p: ins[0] / torch.sqrt((ins[0] * ins[0]).sum()), IMAGE,
                           edge_unchecked=UNDERFLOW),
    # Losses.
    "mse_loss": loss(lambda p, t: (p - t) * (p - t)),
    "huber_loss": loss(lambda p, t: huber((p - t).abs(), 0.5)),
    "smooth_l1_loss": loss(lambda p, t: smooth_l1((p - t).abs(), 1.0)),
    "hinge_loss": loss(lambda p, t: relu(1 - p * t)),
    "kl_div": Case(lambda ins, p: kl_div(ins[0], ins[1]), ROWS),
    "cross_entropy": Case(lambda ins, p: cross_entropy(ins[0], ins[1]), {"batch_size": "5", "num_classes": "7"}),
    # Cumulative.
    "cumsum": Case(lambda ins, p: ins[0] @ prefix_matrix(ins[0].shape[1]), SEQUENCE),
    "cumsum_exclusive": Case(lambda ins, p: ins[0] @ prefix_matrix(ins[0].shape[1], inclusive=False), SEQUENCE),
    "cumsum_reverse": Case(lambda ins, p: ins[0] @ prefix_matrix(ins[0].shape[1], reverse=True), SEQUENCE),
    "masked_cumsum": Case(lambda ins, p: torch.where(ins[1], ins[0], torch.zeros_like(ins[0]))
                          @ prefix_matrix(ins[0].shape[1]), SEQUENCE),
    "cumprod": Case(lambda ins, p: cumprod(ins[0]), SEQUENCE),
}


def test_every_level1_problem_has_a_case() -> None:
    assert sorted(p.stem for p in PROBLEMS_DIR.glob("*.py")) == sorted(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_level1_problem_matches_its_formula(worker: WorkerProcess, tmp_path: Path, name: str) -> None:
    check_problem(worker, PROBLEMS_DIR / f"{name}.py", CASES[name], tmp_path)


@pytest.mark.parametrize("name", sorted(CASES))
def test_default_sizes_fit_a_small_budget(name: str) -> None:
    """Default sizes are CPU-sized: one input set stays under 32 MB."""
    assert default_set_bytes(PROBLEMS_DIR / f"{name}.py") <= 32 * 10**6
