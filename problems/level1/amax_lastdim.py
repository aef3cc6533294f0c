"""Max over the last dim: y[b] = max_i x[b, i].

Input: x float32[batch_size, dim]; output: float32[batch_size].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
dim = 8192


class Model(nn.Module):
    """amax over the last dim."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.amax(x, dim=-1)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
