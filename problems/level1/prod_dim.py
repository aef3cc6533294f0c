"""Product over dim 1: y[b, j] = prod_i x[b, i, j].

Input: x float32[batch_size, dim1, dim2] drawn from U(0.9, 1.1) so the product stays
in float32 range; output: float32[batch_size, dim2].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32
dim1 = 256
dim2 = 256


class Model(nn.Module):
    """Product reduction over the middle dim."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.prod(x, dim=1)


def get_inputs():
    x = torch.rand(batch_size, dim1, dim2) * 0.2 + 0.9
    return [x]


def get_init_inputs():
    return []
