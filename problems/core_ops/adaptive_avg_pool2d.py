"""Adaptive average pooling to a fixed grid: y = F.adaptive_avg_pool2d(x, (7, 7)) (uneven windows).

Inputs: x float32[batch, channels, height, width]; output: float32[batch, channels, 7, 7].
ATen ops (Core ATen capture): aten._adaptive_avg_pool2d.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
channels = 16
height = 64
width = 64
out_size = 7


class Model(nn.Module):
    """Adaptive average pool to out_size x out_size."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.adaptive_avg_pool2d(x, (out_size, out_size))


def get_inputs():
    x = torch.randn(batch, channels, height, width)
    return [x]


def get_init_inputs():
    return []
