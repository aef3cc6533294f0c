"""Loop benchmark (bench/cpu_loop_bench.cpp): torch.sigmoid elementwise (the prelude's ke_sigmoid).

Input: x float32[rows, cols] (1M elements, normal, std 4); output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 256
cols = 4096


class Model(nn.Module):
    """torch.sigmoid elementwise (the prelude's ke_sigmoid)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(x)


def get_inputs():
    x = torch.randn(rows, cols) * 4
    return [x]


def get_init_inputs():
    return []
