"""Convolution with a fused epilogue: y = relu(conv(x) + b), x float32[N, 32, H, W], weight float32[64, 32, 3, 3], bias float32[64], stride 1, padding 1; output float32[N, 64, H, W].

ATen ops (Core ATen capture): aten.convolution.default, aten.relu.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
CIN = 32
COUT = 64
H = 40
W = 40


class Model(nn.Module):
    """Conv2d with bias, then ReLU."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(CIN, COUT, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.conv(x))


def get_inputs():
    return [torch.randn(N, CIN, H, W)]


def get_init_inputs():
    return []
