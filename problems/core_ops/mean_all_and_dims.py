"""Means: (x.mean(), x.mean(dim=(0, 1))): a full reduction and one over the leading dims.

Inputs: x float32[a, b, c]; outputs: float32[] (0-d), float32[c].
ATen ops (Core ATen capture): aten.mean.default, aten.mean.dim.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

a = 64
b = 128
c = 64


class Model(nn.Module):
    """Full and partial means."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x.mean(), x.mean(dim=(0, 1))


def get_inputs():
    x = torch.randn(a, b, c)
    return [x]


def get_init_inputs():
    return []
