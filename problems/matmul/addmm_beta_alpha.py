"""Scaled matrix product plus a scaled matrix: y = torch.addmm(c, a, b, beta=0.5, alpha=1.5), c float32[M, N], a float32[M, K], b float32[K, N]; output float32[M, N].

ATen ops (Core ATen capture): aten.addmm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 256
K = 192
N = 320
beta = 0.5
alpha = 1.5


class Model(nn.Module):
    """torch.addmm with beta and alpha."""

    def forward(self, c: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.addmm(c, a, b, beta=beta, alpha=alpha)


def get_inputs():
    # b ~ N(0, 1/K), as a trained layer's weights: outputs stay O(1) at every K, so float32
    # accumulation error stays inside the float32 tolerance at the GPU sizes (K = 4096+)
    # too; with N(0, 1) operands outputs grow as sqrt(K) and near-zero ones miss atol.
    return [torch.randn(M, N), torch.randn(M, K), torch.randn(K, N) / K ** 0.5]


def get_init_inputs():
    return []
