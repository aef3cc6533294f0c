"""Stack three tensors on a new middle dim: y = stack([a, b, a * b], dim=1).

Inputs: a float32[rows, cols], b float32[rows, cols]; output: float32[rows, 3, cols].
ATen ops (Core ATen capture): aten.mul.Tensor, aten.cat.default, aten.view.default
(stack decomposes into unsqueeze + cat).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 256


class Model(nn.Module):
    """a, b and a * b stacked."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.stack([a, b, a * b], dim=1)


def get_inputs():
    a = torch.randn(rows, cols)
    b = torch.randn(rows, cols)
    return [a, b]


def get_init_inputs():
    return []
