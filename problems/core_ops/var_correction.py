"""Variance with an explicit correction: y = torch.var(x, dim=1, correction=0) (population variance).

Inputs: x float32[rows, cols]; output: float32[rows].
ATen ops (Core ATen capture): aten.var.correction.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """Population variance per row."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.var(x, dim=1, correction=0)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
