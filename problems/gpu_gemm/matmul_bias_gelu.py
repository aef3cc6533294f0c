"""Matmul, bias, GELU: y = gelu(a @ b + bias) in float16 (bias broadcast over rows).

Inputs: a float16[M, K], b float16[K, N], bias float16[N]; output: float16[M, N].
Values: a ~ N(0, 1), b ~ N(0, 1/K), bias ~ N(0, 0.1^2): outputs stay O(1).
Tolerance: the float16 default (atol 1e-5, rtol 1e-3) plus eager's own rounding error
per element on the seeds (docs/fitness.md). Eager rounds to float16 after the matmul,
the add and the GELU (three roundings of 2^-11 relative each); a fused kernel rounds
once, so the two differ by ~1.5e-3 |y|, more where the product and bias cancel
(docs/gpu.md, "Matmul").
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 512  # CPU size; gpu_sizes.json gives the GPU one (4096)
N = 512
K = 512
EDGE_CASES = ["negative", "zeros"]  # matmul.py says why not "large"


class Model(nn.Module):
    """gelu(a @ b + bias)."""

    def forward(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return F.gelu(a @ b + bias)


def get_inputs():
    a = torch.randn(M, K).to(torch.float16)
    b = (torch.randn(K, N) / math.sqrt(K)).to(torch.float16)
    bias = (0.1 * torch.randn(N)).to(torch.float16)
    return [a, b, bias]


def get_init_inputs():
    return []
