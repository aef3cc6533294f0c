"""Bitwise logic on int64: y = (a & b) | (~a ^ c).

Inputs: a, b, c int64[rows, cols] in [-2^20, 2^20); output: int64[rows, cols].
ATen ops (Core ATen capture): aten.bitwise_and.Tensor, aten.bitwise_not.default,
aten.bitwise_xor.Tensor, aten.bitwise_or.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 512
bound = 1 << 20


class Model(nn.Module):
    """and, or, xor, not."""

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return (a & b) | (~a ^ c)


def get_inputs():
    a = torch.randint(-bound, bound, (rows, cols))
    b = torch.randint(-bound, bound, (rows, cols))
    c = torch.randint(-bound, bound, (rows, cols))
    return [a, b, c]


def get_init_inputs():
    return []
