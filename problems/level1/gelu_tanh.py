"""GELU, tanh approximation: y = 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), elementwise.

Input: x float32[batch_size, dim]; output: float32[batch_size, dim].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
dim = 16384


class Model(nn.Module):
    """GELU, tanh approximation."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(x, approximate="tanh")


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
