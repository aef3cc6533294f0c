"""Loop benchmark (bench/cpu_loop_bench.cpp): sum over a middle dim, a reduction whose
elements are strided (rowwise template, [O, R, I] = [64, 256, 64]).

Input: x float32[outer, reduced, inner] (1M elements, standard normal); output:
float32[outer, inner].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

outer = 64
reduced = 256
inner = 64


class Model(nn.Module):
    """x.sum(dim=1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=1)


def get_inputs():
    return [torch.randn(outer, reduced, inner)]


def get_init_inputs():
    return []
