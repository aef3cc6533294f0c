"""Integer arithmetic on int64: y = (a + b) * 3 + remainder(a, b) - floor_divide(a, b).

Inputs: a int64[rows, cols] in [-1000, 1000), b int64[rows, cols] in [1, 100);
output: int64[rows, cols] (exact; remainder takes the divisor's sign, floor_divide
rounds toward -inf).
ATen ops (Core ATen capture): aten.add.Tensor, aten.mul.Tensor, aten.remainder.Tensor,
aten.div.Tensor_mode (rounding_mode="floor"), aten.sub.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 512


class Model(nn.Module):
    """Integer add, mul, remainder, floor division."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a + b) * 3 + torch.remainder(a, b) - torch.floor_divide(a, b)


def get_inputs():
    a = torch.randint(-1000, 1000, (rows, cols))
    b = torch.randint(1, 100, (rows, cols))
    return [a, b]


def get_init_inputs():
    return []
