"""Clamp between per-element bounds: y = clamp(x, min=lo, max=lo + width).

Inputs: x float32[rows, cols], lo float32[rows, cols], width float32[rows, cols] (>= 0);
output: float32[rows, cols].
ATen ops (Core ATen capture): aten.add.Tensor, aten.clamp.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """Elementwise clamp with tensor bounds."""

    def forward(self, x: torch.Tensor, lo: torch.Tensor, width: torch.Tensor) -> torch.Tensor:
        return torch.clamp(x, min=lo, max=lo + width)


def get_inputs():
    x = torch.randn(rows, cols)
    lo = torch.randn(rows, cols) * 0.5
    width = torch.rand(rows, cols)
    return [x, lo, width]


def get_init_inputs():
    return []
