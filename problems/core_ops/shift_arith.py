"""Bit shifts on int64, spelled as the Core ATen arithmetic they equal:
y = (a << 3) + (b >> 2), written a * 8 + floor_divide(b, 4).

Core ATen has no shift operator (aten.__lshift__ / bitwise_left_shift are not tagged
torch.Tag.core and core_aten_decompositions() has no rule for them), so a problem
written with << and >> would capture a non-core op. On int64, a << k == a * 2^k
(two's-complement wrap alike) and the arithmetic b >> k == floor(b / 2^k).

Inputs: a, b int64[rows, cols] in [-2^20, 2^20); output: int64[rows, cols].
ATen ops (Core ATen capture): aten.mul.Tensor, aten.div.Tensor_mode (floor), aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 512
bound = 1 << 20


class Model(nn.Module):
    """Left shift by 3 plus arithmetic right shift by 2."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a * 8 + torch.floor_divide(b, 4)


def get_inputs():
    a = torch.randint(-bound, bound, (rows, cols))
    b = torch.randint(-bound, bound, (rows, cols))
    return [a, b]


def get_init_inputs():
    return []
