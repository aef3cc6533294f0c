"""Loop benchmark (bench/cpu_loop_bench.cpp): layer normalization over the last dim,
eps 1e-5, with an affine weight and bias (rowwise template).

Input: x float32[rows, cols] (1M elements, standard normal); parameters weight, bias
float32[cols]; output: same shape as x.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 256
cols = 4096


class Model(nn.Module):
    """nn.LayerNorm(cols)."""

    def __init__(self, cols: int):
        super().__init__()
        self.ln = nn.LayerNorm(cols)
        with torch.no_grad():
            self.ln.weight.copy_(torch.rand(cols) + 0.5)
            self.ln.bias.copy_(torch.randn(cols) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return [cols]
