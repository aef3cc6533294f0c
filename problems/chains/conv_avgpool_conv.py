"""Conv, average pool, conv: y = conv2(avg_pool2d(relu(conv1(x)), 2)).

Inputs: x float32[batch, in_channels, height, width]; params: conv1 weight
float32[channels, in_channels, 3, 3] + bias, conv2 weight float32[channels, channels, 3, 3]
+ bias; output: float32[batch, channels, height / 2, width / 2].
ATen ops (Core ATen capture): aten.convolution.default (twice), aten.relu.default,
aten.avg_pool2d.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
in_channels = 16
channels = 16
height = 32
width = 32


class Model(nn.Module):
    """Downsampling conv stage."""

    def __init__(self, in_channels: int, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2(F.avg_pool2d(F.relu(self.conv1(x)), 2))


def get_inputs():
    x = torch.randn(batch, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, channels]
