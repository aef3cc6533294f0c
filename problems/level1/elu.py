"""ELU: y = x if x > 0 else alpha * (exp(x) - 1), elementwise (alpha = 1.0).

Input: x float32[batch_size, dim]; output: float32[batch_size, dim].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 64
dim = 16384
alpha = 1.0


class Model(nn.Module):
    """ELU."""

    def __init__(self, alpha: float = 1.0):
        super().__init__()
        self.alpha = alpha

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x, alpha=self.alpha)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return [alpha]
