"""Tiny residual block: y = x + conv2(relu(conv1(x))).

Inputs: x float32[batch, channels, height, width]; params: conv1/conv2 weight
float32[channels, channels, 3, 3], bias float32[channels]; output: float32[batch, channels, height, width].
ATen ops (Core ATen capture): aten.convolution.default (twice), aten.relu.default, aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
channels = 16
height = 32
width = 32


class Model(nn.Module):
    """conv, relu, conv, skip add."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv2(F.relu(self.conv1(x)))


def get_inputs():
    x = torch.randn(batch, channels, height, width)
    return [x]


def get_init_inputs():
    return [channels]
