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


# Edge sets: not "large" (inputs x 1e4). Its reference is float64 throughout, and
# float32 sums of terms that large cancel to outputs an absolute error of one float32
# rounding away from it: eager PyTorch itself misses 1e-4 on 78 outputs here (seed 0,
# torch 2.11 on the CPU). The other sets apply.
EDGE_CASES = ["zeros", "negative", "tiny"]


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
