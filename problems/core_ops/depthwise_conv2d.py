"""Depthwise 3x3 convolution (groups = channels), padding 1, no bias.

Inputs: x float32[batch, channels, height, width], param.conv.weight float32[channels, 1, 3, 3];
output: float32[batch, channels, height, width].
ATen ops (Core ATen capture): aten.convolution.default (groups = channels).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
channels = 32
height = 64
width = 64


class Model(nn.Module):
    """nn.Conv2d with groups = channels."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch, channels, height, width)
    return [x]


def get_init_inputs():
    return [channels]
