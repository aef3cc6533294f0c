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

# Edge sets: "large" (inputs x 1e4) is left out: a float32 sum of K products that
# large is not within the absolute tolerance of the float64 reference, in any
# summation order (as for problems/chains). The other sets apply.
EDGE_CASES = ["zeros", "negative", "tiny"]


class Model(nn.Module):
    """torch.baddbmm with a 1-d bias (beta = alpha = 1)."""

    def forward(self, bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(bias, a, b)


def get_inputs():
    return [torch.randn(N), torch.randn(B, M, K), torch.randn(B, K, N)]


def get_init_inputs():
    return []
