"""Argmax over dim 1: y[b, j] = argmax_i x[b, i, j] (first index on ties).

Input: x float32[batch_size, dim1, dim2]; output: int64[batch_size, dim2].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
dim1 = 256
dim2 = 256


class Model(nn.Module):
    """Argmax over the middle dim."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.argmax(x, dim=1)


def get_inputs():
    x = torch.randn(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return []
