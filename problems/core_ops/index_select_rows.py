"""Pick rows by index: y = x[index] (index_select on dim 0; indices may repeat).

Inputs: x float32[rows, cols], index int64[picks] in [0, rows); output: float32[picks, cols].
ATen ops (Core ATen capture): aten.index_select.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 1024
cols = 512
picks = 768


class Model(nn.Module):
    """torch.index_select on dim 0."""

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.index_select(x, 0, index)


def get_inputs():
    x = torch.randn(rows, cols)
    index = torch.randint(0, rows, (picks,))
    return [x, index]


def get_init_inputs():
    return []
