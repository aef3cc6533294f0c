"""Attention-style scores: softmax(x * scale + bias) over the last dim, bias broadcast over rows.

Inputs: x float32[batch_size, hidden], param.bias float32[hidden]; output: float32[batch_size, hidden].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
hidden = 2048
scale = 0.125


class Model(nn.Module):
    """Scale, additive bias, softmax."""

    def __init__(self, hidden: int, scale: float):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(hidden))
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x * self.scale + self.bias, dim=-1)


def get_inputs():
    x = torch.randn(batch_size, hidden)
    return [x]


def get_init_inputs():
    return [hidden, scale]
