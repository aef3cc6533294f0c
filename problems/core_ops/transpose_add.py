"""Transpose and add: y = a^T + b (torch.t of a 2-D tensor; the result is a new tensor).

Inputs: a float32[rows, cols], b float32[cols, rows]; output: float32[cols, rows].
ATen ops (Core ATen capture): aten.permute.default (torch.t), aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """a.t() + b."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a.t() + b


def get_inputs():
    a = torch.randn(rows, cols)
    b = torch.randn(cols, rows)
    return [a, b]


def get_init_inputs():
    return []
