"""Spatial-transformer sampling: bilinear reads of x at grid positions in [-1.2, 1.2]
(zeros outside the image), align_corners=False.

Inputs: x float32[batch, channels, height, width], grid float32[batch, out_h, out_w, 2];
output: float32[batch, channels, out_h, out_w].
ATen ops (Core ATen capture): aten.grid_sampler_2d.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 4
channels = 8
height = 24
width = 24
out_h = 20
out_w = 20
# Grid coordinates are positions in [-1.2, 1.2]: an edge set that scales them outside
# that range (the "large" one) is skipped; the others apply.
INPUT_DOMAIN = {"grid": (-1.2, 1.2)}


class Model(nn.Module):
    """F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros")."""

    def forward(self, x: torch.Tensor, grid: torch.Tensor) -> torch.Tensor:
        return F.grid_sample(x, grid, mode="bilinear", padding_mode="zeros", align_corners=False)


def get_inputs():
    return [torch.randn(batch, channels, height, width), torch.rand(batch, out_h, out_w, 2) * 2.4 - 1.2]


def get_init_inputs():
    return []
