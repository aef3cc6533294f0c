"""Rounding family: y = sign(x) * floor(|x| * 4) + round(x * 10) / 10.

Inputs: x float32[rows, cols]; output: float32[rows, cols].
ATen ops (Core ATen capture): aten.sign.default, aten.abs.default, aten.mul.Tensor,
aten.floor.default, aten.round.default, aten.div.Tensor, aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """sign, abs, floor, round."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sign(x) * torch.floor(x.abs() * 4.0) + torch.round(x * 10.0) / 10.0


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
