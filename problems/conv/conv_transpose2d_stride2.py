"""Transposed 2-d convolution (upsampling x2): y = conv_transpose2d(x) + b, x float32[N, CIN, H, W], weight float32[CIN, COUT, 3, 3], stride 2, padding 1, output_padding 1; output float32[N, COUT, 2H, 2W].

ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
CIN = 32
COUT = 16
H = 16
W = 16


class Model(nn.Module):
    """ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1)."""

    def __init__(self):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(CIN, COUT, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.deconv(x)


def get_inputs():
    return [torch.randn(N, CIN, H, W)]


def get_init_inputs():
    return []
