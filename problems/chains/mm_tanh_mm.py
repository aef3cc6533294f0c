"""Two plain matmuls around a tanh: y = tanh(a @ b) @ c.

Inputs: a float32[M, K], b float32[K, N], c float32[N, P]; output: float32[M, P].
ATen ops (Core ATen capture): aten.mm.default (twice), aten.tanh.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 256
K = 256
N = 256
P = 128


class Model(nn.Module):
    """mm, tanh, mm."""

    def forward(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        return torch.tanh(a @ b) @ c


def get_inputs():
    a = torch.randn(M, K)
    b = torch.randn(K, N) / K ** 0.5
    c = torch.randn(N, P) / N ** 0.5
    return [a, b, c]


def get_init_inputs():
    return []
