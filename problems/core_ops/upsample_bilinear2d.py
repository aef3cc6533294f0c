"""Bilinear upsampling by 2 (half-pixel centres, align_corners=False), as a decoder does.

Inputs: x float32[batch, channels, height, width];
output: float32[batch, channels, 2 height, 2 width].
ATen ops (Core ATen capture): aten.upsample_bilinear2d.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
channels = 16
height = 32
width = 32


class Model(nn.Module):
    """F.interpolate(x, scale_factor=2, mode="bilinear")."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)


def get_inputs():
    return [torch.randn(batch, channels, height, width)]


def get_init_inputs():
    return []
