"""Concatenate along columns: y = cat([a, b * 2], dim=1).

Inputs: a float32[rows, cols_a], b float32[rows, cols_b]; output: float32[rows, cols_a + cols_b].
ATen ops (Core ATen capture): aten.mul.Tensor, aten.cat.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols_a = 256
cols_b = 512


class Model(nn.Module):
    """a beside 2 b."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.cat([a, b * 2.0], dim=1)


def get_inputs():
    a = torch.randn(rows, cols_a)
    b = torch.randn(rows, cols_b)
    return [a, b]


def get_init_inputs():
    return []
