"""Matrix product with a very small inner dim: y = a @ b, a float32[M, K], b float32[K, N], K = 4; output float32[M, N] (an outer-product-like, store-bound product).

ATen ops (Core ATen capture): aten.mm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 1024
K = 4
N = 768


class Model(nn.Module):
    """torch.mm with K = 4."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.mm(a, b)


def get_inputs():
    return [torch.randn(M, K), torch.randn(K, N)]


def get_init_inputs():
    return []
