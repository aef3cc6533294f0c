"""ResNet bottleneck 1x1 convolution without bias: y = conv(x), x float32[N, 256, H, W], weight float32[64, 256, 1, 1]; output float32[N, 64, H, W].

ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 1
CIN = 256
COUT = 64
H = 56
W = 56


class Model(nn.Module):
    """nn.Conv2d(CIN, COUT, 1, bias=False)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(CIN, COUT, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, CIN, H, W)]


def get_init_inputs():
    return []
