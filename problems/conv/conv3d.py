"""3-d convolution: y = conv3d(x) + b, x float32[N, CIN, D, H, W], weight float32[COUT, CIN, 3, 3, 3], padding 1; output float32[N, COUT, D, H, W].

ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
CIN = 8
COUT = 16
D = 8
H = 16
W = 16


class Model(nn.Module):
    """Conv3d(8, 16, 3, padding=1) with bias."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv3d(CIN, COUT, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, CIN, D, H, W)]


def get_init_inputs():
    return []
