"""Adaptive max pooling to 5x7: y = adaptive_max_pool2d(x, (5, 7)), x float32[N, C, H, W] (uneven, overlapping windows); output float32[N, C, 5, 7].

ATen ops (Core ATen capture): aten.adaptive_max_pool2d.default, getitem.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
C = 64
H = 24
W = 30


class Model(nn.Module):
    """Adaptive max pooling to 5 x 7 (values only)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.adaptive_max_pool2d(x, (5, 7))


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
