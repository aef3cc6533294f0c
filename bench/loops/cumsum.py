"""Loop benchmark (bench/cpu_loop_bench.cpp): inclusive prefix sum over the last dim (scan template).

Input: x float32[rows, cols] (1M elements, standard normal); output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 256
cols = 4096


class Model(nn.Module):
    """inclusive prefix sum over the last dim (scan template)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=-1)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
