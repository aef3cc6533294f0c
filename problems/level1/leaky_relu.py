"""LeakyReLU: y = x if x >= 0 else negative_slope * x, elementwise (negative_slope = 0.01).

Input: x float32[batch_size, dim]; output: float32[batch_size, dim].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
dim = 16384
negative_slope = 0.01


class Model(nn.Module):
    """LeakyReLU."""

    def __init__(self, negative_slope: float = 0.01):
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.leaky_relu(x, negative_slope=self.negative_slope)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [negative_slope]
