"""Reverse (suffix) sum over dim 1: y[b, i] = sum_{j >= i} x[b, j].

Input: x float32[batch_size, length]; output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
length = 8192


class Model(nn.Module):
    """Reverse cumulative sum over dim 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x.flip(1), dim=1).flip(1)


def get_inputs():
    x = torch.randn(batch_size, length)
    return [x]


def get_init_inputs():
    return []
