"""Reverse two dims: y = torch.flip(x, dims=(0, 2)).

Inputs: x float32[a, b, c]; output: float32[a, b, c].
ATen ops (Core ATen capture): aten.flip.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

a = 64
b = 64
c = 128


class Model(nn.Module):
    """Flip dims 0 and 2."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, dims=(0, 2))


def get_inputs():
    x = torch.randn(a, b, c)
    return [x]


def get_init_inputs():
    return []
