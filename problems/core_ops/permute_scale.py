"""Permute NCHW to NHWC and scale: y = x.permute(0, 2, 3, 1) * scale.

Inputs: x float32[batch, channels, height, width]; output: float32[batch, height, width, channels].
ATen ops (Core ATen capture): aten.permute.default, aten.mul.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
channels = 64
height = 32
width = 16
scale = 2.0


class Model(nn.Module):
    """Channels-last copy, scaled."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.permute(0, 2, 3, 1) * self.scale


def get_inputs():
    x = torch.randn(batch, channels, height, width)
    return [x]


def get_init_inputs():
    return [scale]
