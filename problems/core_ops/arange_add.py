"""Add a position ramp: y = x + arange(cols) (int64 ramp promoted to float32).

Inputs: x float32[rows, cols]; output: float32[rows, cols].
ATen ops (Core ATen capture): aten.arange.start_step (int64), aten.add.Tensor (mixed dtypes).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """x plus its column index."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + torch.arange(cols, device=x.device)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
