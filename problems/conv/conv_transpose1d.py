"""Transposed 1-d convolution: y = conv_transpose1d(x) + b, x float32[N, CIN, L], weight float32[CIN, COUT, 4], stride 2, padding 1; output float32[N, COUT, 2L].

ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
CIN = 32
COUT = 16
L = 128


class Model(nn.Module):
    """ConvTranspose1d(32, 16, 4, stride=2, padding=1)."""

    def __init__(self):
        super().__init__()
        self.deconv = nn.ConvTranspose1d(CIN, COUT, 4, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.deconv(x)


def get_inputs():
    return [torch.randn(N, CIN, L)]


def get_init_inputs():
    return []
