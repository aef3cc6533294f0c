"""Antisymmetric part of a batch of square matrices: y = x.transpose(1, 2) - x.

Inputs: x float32[batch, n, n]; output: float32[batch, n, n].
ATen ops (Core ATen capture): aten.permute.default (transpose), aten.sub.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 16
n = 128


class Model(nn.Module):
    """x^T - x per batch entry."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2) - x


def get_inputs():
    x = torch.randn(batch, n, n)
    return [x]


def get_init_inputs():
    return []
