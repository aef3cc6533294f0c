"""Average pooling, padding not counted: y = avg_pool2d(x, 3, stride 2, padding 1, count_include_pad=False), x float32[N, C, H, W].

ATen ops (Core ATen capture): aten.avg_pool2d.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
C = 64
H = 56
W = 56


class Model(nn.Module):
    """3x3 average pooling, stride 2, padding 1, divisor = the window's inside count."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
