"""Argmax over a middle dim: y = x.argmax(dim=1).

Inputs: x float32[a, b, c]; output: int64[a, c].
ATen ops (Core ATen capture): aten.argmax.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

a = 64
b = 128
c = 64


class Model(nn.Module):
    """Index of the max along dim 1."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.argmax(dim=1)


def get_inputs():
    x = torch.randn(a, b, c)
    return [x]


def get_init_inputs():
    return []
