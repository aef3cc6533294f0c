"""Grouped, strided, dilated, padded convolution: y = conv(x), x float32[N, 64, H, W], weight float32[128, 16, 3, 3], groups 4, stride 2, padding 2, dilation 2; output float32[N, 128, H/2, W/2].

ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
CIN = 64
COUT = 128
H = 48
W = 48


class Model(nn.Module):
    """Conv2d(64, 128, 3, stride=2, padding=2, dilation=2, groups=4)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(CIN, COUT, 3, stride=2, padding=2, dilation=2, groups=4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, CIN, H, W)]


def get_init_inputs():
    return []
