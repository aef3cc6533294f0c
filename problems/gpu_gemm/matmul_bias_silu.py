"""Matmul with bias (addmm) and SiLU in bfloat16: y = silu(addmm(bias, a, b)).

Inputs: a bfloat16[M, K], b bfloat16[K, N], bias bfloat16[N]; output: bfloat16[M, N].
Values: a ~ N(0, 1), b ~ N(0, 1/K), bias ~ N(0, 0.1^2): outputs stay O(1).
Tolerance: the bfloat16 default (atol 1e-5, rtol 1.6e-2) plus eager's own rounding
error per element on the seeds (docs/fitness.md): eager rounds the matmul result
(|x w^T| reaches ~5: 1e-2 absolute) and then the sum with the bias again, a fused kernel
once, and where they cancel the two differ by units of the product's magnitude. (The
file used to set atol 3e-2, rtol 2e-2 for that; docs/gpu.md, "Matmul".)
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
    """silu(bias + a @ b)."""

    def forward(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return F.silu(torch.addmm(bias, a, b))


def get_inputs():
    a = torch.randn(M, K).to(torch.bfloat16)
    b = (torch.randn(K, N) / math.sqrt(K)).to(torch.bfloat16)
    bias = (0.1 * torch.randn(N)).to(torch.bfloat16)
    return [a, b, bias]


def get_init_inputs():
    return []
