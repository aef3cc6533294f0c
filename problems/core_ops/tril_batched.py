"""Lower triangle including the diagonal: y = torch.tril(x) on a batch of matrices.

Inputs: x float32[batch, n, n]; output: float32[batch, n, n].
ATen ops (Core ATen capture): aten.arange.start_step, aten.unsqueeze.default,
aten.sub.Tensor, aten.le.Scalar, aten.scalar_tensor.default, aten.where.self.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
n = 256


class Model(nn.Module):
    """Lower triangle."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tril(x)


def get_inputs():
    x = torch.randn(batch, n, n)
    return [x]


def get_init_inputs():
    return []
