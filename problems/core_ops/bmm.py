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
