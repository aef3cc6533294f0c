"""Loop benchmark (bench/cpu_loop_bench.cpp): x * sigmoid(x) + y, a fused elementwise
chain (pointwise template; eager PyTorch runs three ops and two temporaries).

Inputs: x, y float32[rows, cols] (1M elements each, standard normal); output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 256
cols = 4096


class Model(nn.Module):
    """x * sigmoid(x) + y."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(x) + y


def get_inputs():
    return [torch.randn(rows, cols), torch.randn(rows, cols)]


def get_init_inputs():
    return []
