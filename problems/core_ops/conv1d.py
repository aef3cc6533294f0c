"""1-D convolution with bias: y = conv1d(x, W, b, padding=1), kernel 3.

Inputs: x float32[batch, in_channels, length], param.conv.weight float32[out_channels,
in_channels, 3], param.conv.bias float32[out_channels]; output: float32[batch, out_channels, length].
ATen ops (Core ATen capture): aten.convolution.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
in_channels = 32
out_channels = 32
length = 512


class Model(nn.Module):
    """nn.Conv1d, kernel 3, padding 1."""

    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv1d(in_channels, out_channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x)


def get_inputs():
    x = torch.randn(batch, in_channels, length)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels]
