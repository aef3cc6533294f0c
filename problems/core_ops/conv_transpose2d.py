"""Transposed convolution upsampling by 2: kernel 3, stride 2, padding 1, output_padding 1, bias.

Inputs: x float32[batch, in_channels, height, width], param.deconv.weight
float32[in_channels, out_channels, 3, 3], param.deconv.bias float32[out_channels];
output: float32[batch, out_channels, 2 height, 2 width].
ATen ops (Core ATen capture): aten.convolution.default (transposed=True).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
in_channels = 16
out_channels = 8
height = 32
width = 32


class Model(nn.Module):
    """nn.ConvTranspose2d, stride 2."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.deconv = nn.ConvTranspose2d(in_channels, out_channels, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.deconv(x)


def get_inputs():
    x = torch.randn(batch, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
