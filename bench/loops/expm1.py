"""Loop benchmark (bench/cpu_loop_bench.cpp): torch.expm1 elementwise (the prelude's ke_expm1).

Input: x float32[rows, cols] (1M elements, standard normal); output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 256
cols = 4096


class Model(nn.Module):
    """torch.expm1 elementwise (the prelude's ke_expm1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.expm1(x)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
