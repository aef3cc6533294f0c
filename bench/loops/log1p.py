"""Loop benchmark (bench/cpu_loop_bench.cpp): torch.log1p elementwise (the prelude's ke_log1p).

Input: x float32[rows, cols] (1M elements, uniform on [-0.5, 4.5)); output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 256
cols = 4096


class Model(nn.Module):
    """torch.log1p elementwise (the prelude's ke_log1p)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log1p(x)


def get_inputs():
    x = torch.rand(rows, cols) * 5 - 0.5
    return [x]


def get_init_inputs():
    return []
