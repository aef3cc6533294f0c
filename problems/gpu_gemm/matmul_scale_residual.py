"""Matmul, scale, residual: y = (a @ b) * scale + residual in float16.

Inputs: a float16[M, K], b float16[K, N], residual float16[M, N]; output: float16[M, N].
Values: a ~ N(0, 1), b ~ N(0, 1/K), residual ~ N(0, 1): outputs stay O(1).
Tolerance: the float16 default (atol 1e-5, rtol 1e-3) plus eager's own rounding error
per element on the seeds (docs/fitness.md); eager rounds three times (matmul, scale,
add), a fused kernel once (docs/gpu.md, "Matmul").
"""

import math

import torch
import torch.nn as nn

M = 512  # CPU size; gpu_sizes.json gives the GPU one (4096)
N = 512
K = 512
scale = 0.5
EDGE_CASES = ["negative", "zeros"]  # matmul.py says why not "large"


class Model(nn.Module):
    """(a @ b) * scale + residual."""

    def __init__(self, scale: float):
        super().__init__()
        self.scale = scale

    def forward(self, a: torch.Tensor, b: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        return (a @ b) * self.scale + residual


def get_inputs():
    a = torch.randn(M, K).to(torch.float16)
    b = (torch.randn(K, N) / math.sqrt(K)).to(torch.float16)
    residual = torch.randn(M, N).to(torch.float16)
    return [a, b, residual]


def get_init_inputs():
    return [scale]
