"""Tiny classifier head: logits = fc(flatten(adaptive_avg_pool2d(relu(conv(x)), 1))).

Inputs: x float32[batch, in_channels, height, width]; params: conv weight
float32[channels, in_channels, 3, 3] + bias [channels], fc weight float32[classes, channels]
+ bias [classes]; output: float32[batch, classes].
ATen ops (Core ATen capture): aten.convolution.default, aten.relu.default, aten.mean.dim
(adaptive pool to 1x1), aten.view.default, aten.permute.default, aten.addmm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
in_channels = 16
channels = 32
height = 32
width = 32
classes = 10


class Model(nn.Module):
    """Conv, ReLU, global average pool, Linear."""

    def __init__(self, in_channels: int, channels: int, classes: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, channels, 3, padding=1)
        self.fc = nn.Linear(channels, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(F.relu(self.conv(x)), 1), 1))


def get_inputs():
    x = torch.randn(batch, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, channels, classes]
