"""SiLU: y = x * sigmoid(x), elementwise, through F.silu.

Input: x float32[batch_size, dim]; output: float32[batch_size, dim].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
dim = 16384


class Model(nn.Module):
    """SiLU."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(x)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
