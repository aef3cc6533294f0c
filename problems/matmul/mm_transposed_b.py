"""Matmul with a transposed operand: y = a @ b.T, a float32[M, K], b float32[N, K]; output float32[M, N].

ATen ops (Core ATen capture): aten.permute.default, aten.mm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 384
K = 768
N = 512

# Edge sets: "large" (inputs x 1e4) is left out: a float32 sum of K products that
# large is not within the absolute tolerance of the float64 reference, in any
# summation order (as for problems/chains). The other sets apply.
EDGE_CASES = ["zeros", "negative", "tiny"]


class Model(nn.Module):
    """a @ b.T."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b.t()


def get_inputs():
    return [torch.randn(M, K), torch.randn(N, K) / K ** 0.5]


def get_init_inputs():
    return []
