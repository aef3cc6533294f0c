"""ResNet stage-1 3x3 convolution without bias: y = conv(x), x float32[N, C, H, W], weight float32[C, C, 3, 3], stride 1, padding 1; output float32[N, C, H, W].

ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1
C = 64
H = 56
W = 56


class Model(nn.Module):
    """nn.Conv2d(C, C, 3, padding=1, bias=False)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(C, C, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
