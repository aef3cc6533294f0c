"""Loop benchmark (bench/cpu_loop_bench.cpp): sum over the last dim (rowwise template,
contiguous rows).

Input: x float32[rows, cols] (1M elements, standard normal); output: float32[rows].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 256
cols = 4096


class Model(nn.Module):
    """x.sum(dim=-1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=-1)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
