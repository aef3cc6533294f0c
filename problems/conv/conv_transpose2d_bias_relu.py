"""Decoder upsampling block: y = relu(conv_transpose2d(x, stride 2) + b) + skip, x float32[N, CIN, H, W], skip float32[N, COUT, 2H, 2W]; output float32[N, COUT, 2H, 2W].

ATen ops (Core ATen capture): aten.convolution.default (transposed, output_padding 1),
aten.relu.default, aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
CIN = 16
COUT = 8
H = 12
W = 12


class Model(nn.Module):
    """ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1), ReLU, skip add."""

    def __init__(self):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(CIN, COUT, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.deconv(x)) + skip


def get_inputs():
    return [torch.randn(N, CIN, H, W), torch.randn(N, COUT, 2 * H, 2 * W)]


def get_init_inputs():
    return []
