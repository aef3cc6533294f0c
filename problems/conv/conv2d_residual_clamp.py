"""Convolution, residual add and clamp: y = clamp(conv(x) + b + x, -2, 2), x float32[N, C, H, W], weight float32[C, C, 3, 3]; output float32[N, C, H, W].

ATen ops (Core ATen capture): aten.convolution.default, aten.add.Tensor, aten.clamp.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
C = 48
H = 32
W = 32


class Model(nn.Module):
    """Conv2d with bias, residual add, clamp."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C, C, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.conv(x) + x, -2.0, 2.0)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
