"""Upper triangle above the diagonal: y = torch.triu(x, diagonal=1) on a batch of matrices.

Inputs: x float32[batch, n, n]; output: float32[batch, n, n].
ATen ops (Core ATen capture): aten.arange.start_step, aten.unsqueeze.default,
aten.sub.Tensor, aten.ge.Scalar, aten.scalar_tensor.default, aten.where.self.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
n = 256


class Model(nn.Module):
    """Strict upper triangle."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.triu(x, diagonal=1)


def get_inputs():
    x = torch.randn(batch, n, n)
    return [x]


def get_init_inputs():
    return []
