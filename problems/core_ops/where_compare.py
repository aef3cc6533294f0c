"""Select by a comparison mask: y = where(a > b, a - b, 0.5 * b).

Inputs: a float32[rows, cols], b float32[rows, cols]; output: float32[rows, cols].
ATen ops (Core ATen capture): aten.gt.Tensor, aten.sub.Tensor, aten.mul.Tensor, aten.where.self.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """Elementwise choice on a > b."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.where(a > b, a - b, b * 0.5)


def get_inputs():
    a = torch.randn(rows, cols)
    b = torch.randn(rows, cols)
    return [a, b]


def get_init_inputs():
    return []
