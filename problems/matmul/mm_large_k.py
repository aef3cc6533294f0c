"""Matrix product with a very large inner dim and a small output: y = a @ b, a float32[M, K], b float32[K, N], K = 8192; output float32[M, N] (split-K territory).

ATen ops (Core ATen capture): aten.mm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 32
K = 8192
N = 48


class Model(nn.Module):
    """torch.mm with K = 8192."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.mm(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N) / K ** 0.5]


def get_init_inputs():
    return []
