"""Broadcast add through an explicit expand: y = x.expand(batch, seq, dim) + z.

Inputs: x float32[batch, 1, dim], z float32[batch, seq, dim]; output: float32[batch, seq, dim].
ATen ops (Core ATen capture): aten.expand.default, aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
seq = 64
dim = 512


class Model(nn.Module):
    """Expanded x plus z."""

    def forward(self, x: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        return x.expand(batch, seq, dim) + z


def get_inputs():
    x = torch.randn(batch, 1, dim)
    z = torch.randn(batch, seq, dim)
    return [x, z]


def get_init_inputs():
    return []
