"""Matmul with a transposed operand: y = a @ b.T, a float32[M, K], b float32[N, K]; output float32[M, N].

ATen ops (Core ATen capture): aten.permute.default, aten.mm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 384
K = 768
N = 512


class Model(nn.Module):
    """a @ b.T."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b.t()


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K) / K ** 0.5]


def get_init_inputs():
    return []
