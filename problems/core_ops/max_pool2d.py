"""Max pooling: y = F.max_pool2d(x, kernel_size=3, stride=2, padding=1).

Inputs: x float32[batch, channels, height, width];
output: float32[batch, channels, height / 2, width / 2].
ATen ops (Core ATen capture): aten.max_pool2d_with_indices.default, getitem.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
channels = 16
height = 64
width = 64


class Model(nn.Module):
    """3x3 max pool, stride 2, padding 1."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(x, kernel_size=3, stride=2, padding=1)


def get_inputs():
    x = torch.randn(batch, channels, height, width)
    return [x]


def get_init_inputs():
    return []
