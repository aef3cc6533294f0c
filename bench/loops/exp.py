"""Loop benchmark (bench/cpu_loop_bench.cpp): torch.exp elementwise (the prelude's ke_exp).

Input: x float32[rows, cols] (1M elements, standard normal); output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 256
cols = 4096


class Model(nn.Module):
    """torch.exp elementwise (the prelude's ke_exp)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.exp(x)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
