"""Chunk rows into three equal parts, one op on each: (c0 * 2, c1 + 1, |c2|).

Inputs: x float32[3 * rows, cols]; outputs: three float32[rows, cols].
ATen ops (Core ATen capture): aten.split_with_sizes.default (chunk), getitem,
aten.mul.Tensor, aten.add.Tensor, aten.abs.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 128
cols = 1024


class Model(nn.Module):
    """Three outputs from torch.chunk."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        c0, c1, c2 = x.chunk(3, dim=0)
        return c0 * 2.0, c1 + 1.0, c2.abs()


def get_inputs():
    x = torch.randn(3 * rows, cols)
    return [x]


def get_init_inputs():
    return []
