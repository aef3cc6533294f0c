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


# Edge sets: not "large" (inputs x 1e4). Its reference is float64 throughout, and
# float32 sums of terms that large cancel to outputs an absolute error of one float32
# rounding away from it: eager PyTorch itself misses 1e-4 on 1 outputs here (seed 0,
# torch 2.11 on the CPU). The other sets apply.
EDGE_CASES = ["zeros", "negative", "tiny"]


class Model(nn.Module):
    """Adaptive average pool to out_size x out_size."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.adaptive_avg_pool2d(x, (out_size, out_size))


def get_inputs():
    x = torch.randn(batch, channels, height, width)
    return [x]


def get_init_inputs():
    return []
