"""Batched matrix product: y = bmm(a, b).

Inputs: a float32[batch, M, K], b float32[batch, K, N]; output: float32[batch, M, N].
ATen ops (Core ATen capture): aten.bmm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 8
M = 64
K = 128
N = 64


# Edge sets: not "large" (inputs x 1e4). Its reference is float64 throughout, and
# float32 sums of terms that large cancel to outputs an absolute error of one float32
# rounding away from it: eager PyTorch itself misses 1e-4 on 23 outputs here (seed 0,
# torch 2.11 on the CPU). The other sets apply.
EDGE_CASES = ["zeros", "negative", "tiny"]


class Model(nn.Module):
    """torch.bmm."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.bmm(a, b)


def get_inputs():
    a = torch.randn(batch, M, K)
    b = torch.randn(batch, K, N) / K ** 0.5
    return [a, b]


def get_init_inputs():
    return []
