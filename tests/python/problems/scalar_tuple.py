"""Test problem: a python float input (becomes a float32 0-d tensor), a non-contiguous
input (made contiguous), and a tuple of two outputs.

forward(x, y, alpha) = (x * alpha + y, sum over dim 1 of x).
"""

import torch
import torch.nn as nn

batch_size = 4
dim = 6


class Model(nn.Module):
    """Scaled add and a row sum."""

    def forward(self, x: torch.Tensor, y: torch.Tensor, alpha: torch.Tensor):
        return x * alpha + y, x.sum(dim=1)


def get_inputs():
    x = torch.randn(batch_size, dim)
    y = torch.randn(dim, batch_size).t()
    return [x, y, 0.5]


def get_init_inputs():
    return []
