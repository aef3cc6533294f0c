"""Average pooling that ignores the padding: y = F.avg_pool2d(x, 3, stride=2, padding=1,
count_include_pad=False).

Inputs: x float32[batch, channels, height, width];
output: float32[batch, channels, height / 2, width / 2].
ATen ops (Core ATen capture): aten.avg_pool2d.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
channels = 16
height = 64
width = 64


class Model(nn.Module):
    """3x3 average pool, border windows averaged over real pixels only."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.avg_pool2d(x, kernel_size=3, stride=2, padding=1, count_include_pad=False)


def get_inputs():
    x = torch.randn(batch, channels, height, width)
    return [x]


def get_init_inputs():
    return []
