"""SELU: y = scale * (max(0, x) + min(0, alpha * (exp(x) - 1))), alpha ~1.6733, scale ~1.0507, elementwise.

Input: x float32[batch_size, dim]; output: float32[batch_size, dim].
"""

import torch
import torch.nn as nn

batch_size = 64
dim = 16384


class Model(nn.Module):
    """SELU."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.selu(x)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
