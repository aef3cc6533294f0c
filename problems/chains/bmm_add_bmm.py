"""Two batched matmuls around a bias add: y = bmm(bmm(a, b) + c, d).

Inputs: a float32[batch, M, K], b float32[batch, K, N], c float32[batch, M, N],
d float32[batch, N, P]; output: float32[batch, M, P].
ATen ops (Core ATen capture): aten.bmm.default (twice), aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
M = 64
K = 64
N = 64
P = 64


class Model(nn.Module):
    """bmm, add, bmm."""

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
        return torch.bmm(torch.bmm(a, b) + c, d)


def get_inputs():
    a = torch.randn(batch, M, K)
    b = torch.randn(batch, K, N) / K ** 0.5
    c = torch.randn(batch, M, N)
    d = torch.randn(batch, N, P) / N ** 0.5
    return [a, b, c, d]


def get_init_inputs():
    return []
