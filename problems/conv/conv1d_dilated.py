"""Dilated 1-d convolution (WaveNet-style): y = conv1d(x) + b, x float32[N, CIN, L], weight float32[COUT, CIN, 3], dilation 4, padding 4; output float32[N, COUT, L].

ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
CIN = 32
COUT = 64
L = 256


class Model(nn.Module):
    """Conv1d(32, 64, 3, padding=4, dilation=4)."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(CIN, COUT, 3, padding=4, dilation=4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    return [torch.randn(N, CIN, L)]


def get_init_inputs():
    return []
