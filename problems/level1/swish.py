"""Swish written out: y = x * sigmoid(x), elementwise (same math as silu.py, two ops).

Input: x float32[batch_size, dim]; output: float32[batch_size, dim].
"""

import torch
import torch.nn as nn

batch_size = 64
dim = 16384


class Model(nn.Module):
    """Swish written out."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
