"""1-d max pooling: y = max_pool1d(x, 3, stride 2, padding 1), x float32[N, C, L]; output float32[N, C, L/2].

ATen ops (Core ATen capture): aten.unsqueeze.default,
aten.max_pool2d_with_indices.default, getitem, aten.squeeze.dim.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 8
C = 64
L = 1024


class Model(nn.Module):
    """Max pooling over a window of 3, stride 2, padding 1."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.max_pool1d(x, 3, stride=2, padding=1)


def get_inputs():
    return [torch.randn(N, C, L)]


def get_init_inputs():
    return []
