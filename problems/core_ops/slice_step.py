"""Strided slices: y = x[:, 0::2] + x[:, 1::2] (sum of even and odd columns).

Inputs: x float32[rows, cols] (cols even); output: float32[rows, cols / 2].
ATen ops (Core ATen capture): aten.slice.Tensor (step 2), aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """Even plus odd columns."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 0::2] + x[:, 1::2]


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
