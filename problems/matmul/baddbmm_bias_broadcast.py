"""Batched product plus a broadcast bias: y = torch.baddbmm(bias, a, b), a float32[B, M, K], b float32[B, K, N], bias float32[N] (broadcast over batch and rows); output float32[B, M, N].

ATen ops (Core ATen capture): aten.baddbmm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 8
M = 64
K = 96
N = 80


class Model(nn.Module):
    """torch.baddbmm with a 1-d bias (beta = alpha = 1)."""

    def forward(self, bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(bias, a, b)


def get_inputs():
    # b ~ N(0, 1/K), as a trained layer's weights: outputs stay O(1) at every K, so float32
    # accumulation error stays inside the float32 tolerance at the GPU sizes (K = 4096+)
    # too; with N(0, 1) operands outputs grow as sqrt(K) and near-zero ones miss atol.
    return [torch.randn(N), torch.randn(B, M, K), torch.randn(B, K, N) / K ** 0.5]


def get_init_inputs():
    return []
