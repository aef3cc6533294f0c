"""Circular shift on two dims: y = torch.roll(x, shifts=(3, -17), dims=(0, 1)).

Inputs: x float32[rows, cols]; output: float32[rows, cols].
ATen ops (Core ATen capture): aten.arange.start_step, aten.add.Tensor, aten.fmod.Scalar,
aten.index_select.default (roll's decomposition).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """Roll rows by 3 and columns by -17."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.roll(x, shifts=(3, -17), dims=(0, 1))


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
