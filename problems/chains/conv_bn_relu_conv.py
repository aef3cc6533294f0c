"""Conv, batch norm (eval: running statistics), ReLU, conv.

Inputs: x float32[batch, channels, height, width]; params: conv1/conv2 weight
float32[channels, channels, 3, 3] (no bias), bn weight/bias/running_mean/running_var
float32[channels], bn.num_batches_tracked int64[]; output: float32[batch, channels, height, width].
ATen ops (Core ATen capture): aten.convolution.default (twice), aten.empty.memory_format,
aten.native_batch_norm.default (kept: lower_compound.cpp lowers it), getitem, aten.relu.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
channels = 16
height = 32
width = 32


class Model(nn.Module):
    """conv -> bn -> relu -> conv."""

    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        with torch.no_grad():  # non-trivial running statistics
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.2, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv2(F.relu(self.bn(self.conv1(x))))


def get_inputs():
    x = torch.randn(batch, channels, height, width)
    return [x]


def get_init_inputs():
    return [channels]
