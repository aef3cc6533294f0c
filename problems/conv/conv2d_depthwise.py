"""Depthwise 3x3 convolution: y = conv2d(x, groups=C) + b, x float32[N, C, H, W], weight float32[C, 1, 3, 3], padding 1; output float32[N, C, H, W].

ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
C = 64
H = 32
W = 32


class Model(nn.Module):
    """Conv2d(64, 64, 3, padding=1, groups=64)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C, C, 3, padding=1, groups=C)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
