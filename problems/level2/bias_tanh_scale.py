"""Bias add, tanh, then scale: y = tanh(x + bias) * scale (bias broadcast over rows).

Inputs: x float32[batch_size, hidden], param.bias float32[hidden]; output: float32[batch_size, hidden].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
hidden = 2048
scale = 2.0


class Model(nn.Module):
    """Bias, tanh, scale."""

    def __init__(self, hidden: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(hidden) * 0.1)
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x + self.bias) * self.scale


def get_inputs():
    x = torch.randn(batch_size, hidden)
    return [x]


def get_init_inputs():
    return [hidden, scale]
