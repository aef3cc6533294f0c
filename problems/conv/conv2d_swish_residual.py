"""Convolution, swish and a residual add: y = x + s * sigmoid(s), s = conv2d(x) + b, x float32[N, C, H, W], weight float32[C, C, 3, 3], padding 1; output float32[N, C, H, W].

ATen ops (Core ATen capture): aten.convolution.default, aten.sigmoid.default,
aten.mul.Tensor, aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
C = 32
H = 24
W = 24


class Model(nn.Module):
    """Conv2d with bias, s * sigmoid(s), plus the input."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C, C, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.conv(x)
        return x + s * torch.sigmoid(s)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
