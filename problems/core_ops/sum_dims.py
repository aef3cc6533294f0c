"""Sum over two non-adjacent dims: y = x.sum(dim=(0, 2)).

Inputs: x float32[a, b, c]; output: float32[b].
ATen ops (Core ATen capture): aten.sum.dim_IntList.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

a = 64
b = 128
c = 64


class Model(nn.Module):
    """Sum over dims 0 and 2."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=(0, 2))


def get_inputs():
    x = torch.randn(a, b, c)
    return [x]


def get_init_inputs():
    return []
