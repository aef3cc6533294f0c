"""1-d average pooling with ceil_mode: y = avg_pool1d(x, 4, stride 3, ceil_mode=True), x float32[N, C, L] (the last window is partial); output float32[N, C, ceil((L - 4) / 3) + 1].

ATen ops (Core ATen capture): aten.unsqueeze.default, aten.avg_pool2d.default,
aten.squeeze.dim.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 8
C = 64
L = 1001


class Model(nn.Module):
    """Average pooling over a window of 4, stride 3, ceil_mode."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool1d(x, 4, stride=3, ceil_mode=True)


def get_inputs():
    return [torch.randn(N, C, L)]


def get_init_inputs():
    return []
