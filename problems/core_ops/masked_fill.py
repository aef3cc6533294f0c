"""Fill masked positions: y = x.masked_fill(mask, -1.0).

Inputs: x float32[rows, cols], mask bool[rows, cols] (about 30% True); output: float32[rows, cols].
ATen ops (Core ATen capture): aten.scalar_tensor.default, aten.where.self.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """x with -1 where mask is set."""

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return x.masked_fill(mask, -1.0)


def get_inputs():
    x = torch.randn(rows, cols)
    mask = torch.rand(rows, cols) < 0.3
    return [x, mask]


def get_init_inputs():
    return []
