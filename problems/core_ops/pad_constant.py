"""Constant padding: y = F.pad(x, (1, 2, 3, 0), value=0.5) (last dim: 1 left, 2 right;
height: 3 top, 0 bottom).

Inputs: x float32[batch, channels, height, width];
output: float32[batch, channels, height + 3, width + 3].
ATen ops (Core ATen capture): aten.constant_pad_nd.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
channels = 16
height = 60
width = 60
value = 0.5


class Model(nn.Module):
    """Pads with a constant."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.pad(x, (1, 2, 3, 0), value=value)


def get_inputs():
    x = torch.randn(batch, channels, height, width)
    return [x]


def get_init_inputs():
    return []
