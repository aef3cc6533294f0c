"""Gather along columns: y[i, j] = x[i, index[i, j]].

Inputs: x float32[rows, cols], index int64[rows, picks] in [0, cols); output: float32[rows, picks].
ATen ops (Core ATen capture): aten.gather.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024
picks = 512


class Model(nn.Module):
    """torch.gather on dim 1."""

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.gather(x, 1, index)


def get_inputs():
    x = torch.randn(rows, cols)
    index = torch.randint(0, cols, (rows, picks))
    return [x, index]


def get_init_inputs():
    return []
