"""Max pooling with dilation and ceil_mode: y = max_pool2d(x, 3, stride 2, padding 1, dilation 2, ceil_mode), x float32[N, C, H, W].

ATen ops (Core ATen capture): aten.max_pool2d_with_indices.default, getitem.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
C = 32
H = 64
W = 66


class Model(nn.Module):
    """Dilated 3x3 max pooling, stride 2, ceil_mode."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(x, 3, stride=2, padding=1, dilation=2, ceil_mode=True)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
