"""Merge heads after a transpose (a reshape of a non-contiguous tensor, so a copy):
y = x.transpose(1, 2).reshape(batch, heads, seq * head_dim) * scale.

Inputs: x float32[batch, seq, heads, head_dim]; output: float32[batch, heads, seq * head_dim].
ATen ops (Core ATen capture): aten.permute.default, aten.clone.default,
aten._unsafe_view.default, aten.mul.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
seq = 128
heads = 8
head_dim = 64
scale = 0.5


class Model(nn.Module):
    """Transpose, flatten the last two dims, scale."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2).reshape(batch, heads, seq * head_dim) * scale


def get_inputs():
    x = torch.randn(batch, seq, heads, head_dim)
    return [x]


def get_init_inputs():
    return []
