"""Adaptive average pooling to 7x7: y = adaptive_avg_pool2d(x, (7, 7)), x float32[N, C, H, W] (windows of 3 or 4).

ATen ops (Core ATen capture): aten._adaptive_avg_pool2d.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 8
C = 128
H = 24
W = 24


class Model(nn.Module):
    """Adaptive average pooling to 7 x 7."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.adaptive_avg_pool2d(x, (7, 7))


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
