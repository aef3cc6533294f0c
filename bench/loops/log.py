"""Loop benchmark (bench/cpu_loop_bench.cpp): torch.log elementwise on positive inputs (the prelude's ke_log).

Input: x float32[rows, cols] (1M elements, uniform on [1e-3, 10)); output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 256
cols = 4096


class Model(nn.Module):
    """torch.log elementwise on positive inputs (the prelude's ke_log)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(x)


def get_inputs():
    x = torch.rand(rows, cols) * 10 + 1e-3
    return [x]


def get_init_inputs():
    return []
