"""3-d average pooling: y = avg_pool3d(x, 3, stride 2, padding 1), x float32[N, C, D, H, W] (padding counted in the divisor); output float32[N, C, D/2, H/2, W/2].

ATen ops (Core ATen capture): aten.avg_pool3d.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
C = 16
D = 16
H = 32
W = 32


class Model(nn.Module):
    """3x3x3 average pooling, stride 2, padding 1, count_include_pad."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool3d(x, 3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(N, C, D, H, W)]


def get_init_inputs():
    return []
