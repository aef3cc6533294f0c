"""Conv block: y = max_pool2d(relu(conv2d(x)), 2).

Inputs: x float32[batch, in_channels, height, width], param.conv.weight
float32[out_channels, in_channels, 3, 3], param.conv.bias float32[out_channels];
output: float32[batch, out_channels, height / 2, width / 2].
ATen ops (Core ATen capture): aten.convolution.default, aten.relu.default,
aten.max_pool2d_with_indices.default, getitem.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
in_channels = 16
out_channels = 16
height = 32
width = 32


class Model(nn.Module):
    """Conv 3x3, ReLU, 2x2 max pool."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(F.relu(self.conv(x)), 2)


def get_inputs():
    x = torch.randn(batch, in_channels, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
