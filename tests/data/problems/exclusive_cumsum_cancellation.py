"""Exclusive prefix sum spelled `cumsum(x) - x`, with inputs where rounding the
inclusive prefix to float32 before subtracting loses the answer.

Input: x float32[2, 4]; output: same shape. In the runner's 'large' edge set (inputs
times 1e4) row 0 is [3, 3e7, 1, 2]: the inclusive prefix 30000003 rounds to 30000004
in float32 (ulp 2 at 3e7), so `float32(s) - x` gives 4 where the float64 reference
gives 3. A kernel must apply `- x` before it rounds.
"""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Exclusive cumulative sum over dim 1 as inclusive sum minus the element."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1) - x


def get_inputs():
    x = torch.tensor([[3e-4, 3e3, 1e-4, 2e-4], [1.0, 2.0, 3.0, 4.0]])
    return [x]


def get_init_inputs():
    return []
