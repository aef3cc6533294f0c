"""3x3 convolution without bias: y = conv2d(x), x float32[N, CIN, H, W], weight float32[COUT, CIN, 3, 3], padding 1, bias=False; output float32[N, COUT, H, W].

ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
CIN = 32
COUT = 64
H = 20
W = 20


class Model(nn.Module):
    """Conv2d(32, 64, 3, padding=1, bias=False)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(CIN, COUT, 3, padding=1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, CIN, H, W)]


def get_init_inputs():
    return []
