"""1-d convolution with an epilogue: y = gelu(conv1d(x) + b), x float32[N, 64, L], weight float32[128, 64, 5], stride 1, padding 2; output float32[N, 128, L].

ATen ops (Core ATen capture): aten.convolution.default, aten.gelu.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
CIN = 64
COUT = 128
L = 512


class Model(nn.Module):
    """Conv1d with bias, then GELU."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(CIN, COUT, 5, padding=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.conv(x))


def get_inputs():
    return [torch.randn(N, CIN, L)]


def get_init_inputs():
    return []
