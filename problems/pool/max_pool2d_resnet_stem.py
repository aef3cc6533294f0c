"""ResNet stem max pooling: y = max_pool2d(x, 3, stride 2, padding 1), x float32[N, C, H, W]; output float32[N, C, H/2, W/2].

ATen ops (Core ATen capture): aten.max_pool2d_with_indices.default, getitem.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
C = 64
H = 112
W = 112


class Model(nn.Module):
    """3x3 max pooling, stride 2, padding 1."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool2d(x, 3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
