"""Power with a float exponent: y = |x| ** 1.5.

Inputs: x float32[rows, cols]; output: float32[rows, cols].
ATen ops (Core ATen capture): aten.abs.default, aten.pow.Tensor_Scalar.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024
exponent = 1.5


class Model(nn.Module):
    """|x| to a fractional power."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.pow(x.abs(), exponent)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
