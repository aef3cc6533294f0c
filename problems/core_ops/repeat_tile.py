"""Tile a tensor: y = x.repeat(2, 3).

Inputs: x float32[rows, cols]; output: float32[2 rows, 3 cols].
ATen ops (Core ATen capture): aten.repeat.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 128
cols = 512


class Model(nn.Module):
    """Tiling by (2, 3)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.repeat(2, 3)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
