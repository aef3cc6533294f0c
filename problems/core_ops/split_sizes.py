"""Split columns into two uneven parts, one op on each: (x[:, :head] * 2, x[:, head:] + 1).

Inputs: x float32[rows, head + tail]; outputs: float32[rows, head], float32[rows, tail].
ATen ops (Core ATen capture): aten.split_with_sizes.default, getitem, aten.mul.Tensor,
aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
head = 256
tail = 768


class Model(nn.Module):
    """Two outputs from torch.split."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        first, second = torch.split(x, [head, tail], dim=1)
        return first * 2.0, second + 1.0


def get_inputs():
    x = torch.randn(rows, head + tail)
    return [x]


def get_init_inputs():
    return []
