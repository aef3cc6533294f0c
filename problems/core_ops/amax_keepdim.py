"""Max over the two trailing dims, kept: y = x.amax(dim=(1, 2), keepdim=True).

Inputs: x float32[a, b, c]; output: float32[a, 1, 1].
ATen ops (Core ATen capture): aten.amax.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

a = 64
b = 128
c = 64


class Model(nn.Module):
    """amax over dims 1 and 2, keepdim."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.amax(dim=(1, 2), keepdim=True)


def get_inputs():
    x = torch.randn(a, b, c)
    return [x]


def get_init_inputs():
    return []
