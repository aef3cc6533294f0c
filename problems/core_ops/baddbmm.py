"""Batched matmul with a scaled residual: y = beta * c + alpha * bmm(a, b) (torch.baddbmm).

Inputs: c float32[batch, M, N], a float32[batch, M, K], b float32[batch, K, N];
output: float32[batch, M, N].
ATen ops (Core ATen capture): aten.baddbmm.default (kept: triton_matmul_graph.cpp matches it).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
M = 64
K = 128
N = 64
beta = 0.5
alpha = 2.0


class Model(nn.Module):
    """torch.baddbmm with beta and alpha."""

    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(c, a, b, beta=beta, alpha=alpha)


def get_inputs():
    c = torch.randn(batch, M, N)
    a = torch.randn(batch, M, K)
    b = torch.randn(batch, K, N) / K ** 0.5
    return [c, a, b]


def get_init_inputs():
    return []
