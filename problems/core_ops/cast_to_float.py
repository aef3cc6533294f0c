"""Int and bool to float casts: y = a.float() * 0.5 + mask.float().

Inputs: a int64[rows, cols] in [-1000, 1000), mask bool[rows, cols]; output: float32[rows, cols].
ATen ops (Core ATen capture): aten._to_copy.default (int64 -> float32, bool -> float32),
aten.mul.Tensor, aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """int64 and bool promoted to float32."""

    def forward(self, a: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return a.to(torch.float32) * 0.5 + mask.to(torch.float32)


def get_inputs():
    a = torch.randint(-1000, 1000, (rows, cols))
    mask = torch.rand(rows, cols) < 0.5
    return [a, mask]


def get_init_inputs():
    return []
