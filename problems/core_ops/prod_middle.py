"""Product over a middle dim: y = x.prod(dim=1) (values near 1, so the product stays O(1)).

Inputs: x float32[a, b, c] = 1 + 0.05 N(0, 1); output: float32[a, c].
ATen ops (Core ATen capture): aten.prod.dim_int.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

a = 64
b = 64
c = 128


class Model(nn.Module):
    """Product over dim 1."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.prod(dim=1)


def get_inputs():
    x = 1.0 + 0.05 * torch.randn(a, b, c)
    return [x]


def get_init_inputs():
    return []
