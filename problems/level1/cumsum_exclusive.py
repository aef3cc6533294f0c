"""Exclusive prefix sum over dim 1: y[b, i] = sum_{j < i} x[b, j], written as the inclusive
sum minus the element.

Input: x float32[batch_size, length] from U(0, 1); output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
length = 8192


class Model(nn.Module):
    """Exclusive cumulative sum over dim 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1) - x


def get_inputs():
    x = torch.rand(batch_size, length)
    return [x]


def get_init_inputs():
    return []
