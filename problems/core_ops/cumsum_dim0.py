"""Cumulative sum down the rows: y = x.cumsum(dim=0).

Inputs: x float32[rows, cols]; output: float32[rows, cols].
ATen ops (Core ATen capture): aten.cumsum.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 512


class Model(nn.Module):
    """Prefix sums along dim 0."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.cumsum(dim=0)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
