"""Constant-filled tensors combined with the input:
y = x * full((cols,), 2) + ones_like(x) - zeros_like(x) + ones(rows, 1) - zeros(rows, cols).

Inputs: x float32[rows, cols]; output: float32[rows, cols] (= 2 x + 2).
ATen ops (Core ATen capture): aten.full.default, aten.full_like.default, aten.mul.Tensor,
aten.add.Tensor, aten.sub.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """Factory ops (full, ones, zeros, *_like) mixed with x."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * torch.full((cols,), 2.0, device=x.device) + torch.ones_like(x) - torch.zeros_like(x)
        return y + torch.ones(rows, 1, device=x.device) - torch.zeros(rows, cols, device=x.device)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
