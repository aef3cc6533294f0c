"""Average pooling with ceil_mode, padding counted: y = avg_pool2d(x, 3, stride 2, padding 1, ceil_mode, count_include_pad), x float32[N, C, H, W].

ATen ops (Core ATen capture): aten.avg_pool2d.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
C = 64
H = 56
W = 58


class Model(nn.Module):
    """3x3 average pooling, stride 2, padding 1, ceil_mode (at even H, W it adds a last, partial
    window: 29 x 30 outputs instead of 28 x 29), padding counted."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
