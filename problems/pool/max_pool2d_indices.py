"""Max pooling returning the indices too: (y, idx) = max_pool2d(x, 3, stride 2, padding 1, return_indices=True), x float32[N, C, H, W]; outputs float32[N, C, H/2, W/2] and int64[N, C, H/2, W/2] (flat index into each H x W plane).

ATen ops (Core ATen capture): aten.max_pool2d_with_indices.default, getitem.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
C = 32
H = 32
W = 32


class Model(nn.Module):
    """3x3 max pooling, stride 2, padding 1; returns values and indices."""

    def forward(self, x: torch.Tensor):
        y, idx = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
        return y, idx


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
