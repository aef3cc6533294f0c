"""Masked prefix sum over dim 1: y[b, i] = sum_{j <= i, mask[b, j]} x[b, j].

Inputs: x float32[batch_size, length], mask bool[batch_size, length]; output: float32, shape of x.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
length = 8192


class Model(nn.Module):
    """Cumulative sum of the elements where mask is true."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x * mask, dim=1)


def get_inputs():
    x = torch.randn(batch_size, length)
    mask = torch.randint(0, 2, (batch_size, length)).bool()
    return [x, mask]


def get_init_inputs():
    return []
