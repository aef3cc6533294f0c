"""Matrix product: y = a @ b (torch.mm).

Inputs: a float32[M, K], b float32[K, N]; output: float32[M, N].
ATen ops (Core ATen capture): aten.mm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 256
K = 256
N = 256


class Model(nn.Module):
    """torch.mm."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.mm(a, b)


def get_inputs():
    a = torch.randn(M, K)
    b = torch.randn(K, N) / K ** 0.5
    return [a, b]


def get_init_inputs():
    return []
