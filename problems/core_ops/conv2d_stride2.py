"""2-D convolution, stride 2, padding 1, with bias: y = conv2d(x, W, b, stride=2, padding=1).

Inputs: x float32[batch, in_channels, height, width], param.conv.weight
float32[out_channels, in_channels, 3, 3], param.conv.bias float32[out_channels];
output: float32[batch, out_channels, height / 2, width / 2].
ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
in_channels = 16
out_channels = 32
height = 32
width = 32


class Model(nn.Module):
    """nn.Conv2d 3x3, stride 2."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, stride=2, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
