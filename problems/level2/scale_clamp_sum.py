"""Scale by a constant, clamp to [-1, 1], then sum over dim 1.

Input: x float32[batch_size, dim]; output: float32[batch_size].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
dim = 8192
scale = 0.75


class Model(nn.Module):
    """Scale, clamp, row sum."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.clamp(x * self.scale, min=-1.0, max=1.0)
        return torch.sum(x, dim=1)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [scale]
