"""Adaptive 3-d max pooling returning the indices too: (y, idx) = adaptive_max_pool3d(x, (3, 5, 6), return_indices=True), x float32[N, C, D, H, W] (uneven, overlapping windows); outputs float32[N, C, 3, 5, 6] and int64[N, C, 3, 5, 6] (flat index into each D x H x W volume).

ATen ops (Core ATen capture): aten.adaptive_max_pool3d.default, getitem.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
C = 32
D = 10
H = 16
W = 20


class Model(nn.Module):
    """Adaptive max pooling to 3 x 5 x 6; returns values and indices."""

    def forward(self, x: torch.Tensor):
        y, idx = F.adaptive_max_pool3d(x, (3, 5, 6), return_indices=True)
        return y, idx


def get_inputs():
    return [torch.randn(N, C, D, H, W)]


def get_init_inputs():
    return []
