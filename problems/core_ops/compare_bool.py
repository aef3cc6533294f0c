"""Comparisons returning bool tensors: (a > b, round(a) == round(b), a <= 0.5, a != b).

Inputs: a float32[rows, cols], b float32[rows, cols]; outputs: four bool[rows, cols].
ATen ops (Core ATen capture): aten.gt.Tensor, aten.round.default, aten.eq.Tensor,
aten.le.Scalar, aten.ne.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 512


class Model(nn.Module):
    """Four boolean masks."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return a > b, torch.round(a) == torch.round(b), a <= 0.5, a != b


def get_inputs():
    a = torch.randn(rows, cols)
    b = torch.randn(rows, cols)
    return [a, b]


def get_init_inputs():
    return []
