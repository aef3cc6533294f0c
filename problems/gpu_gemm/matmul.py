"""Plain matmul: y = a @ b in float16 (the torch.mm / cuBLAS yardstick of the gemm set).

Inputs: a float16[M, K], b float16[K, N]; output: float16[M, N].
Values: a ~ N(0, 1), b ~ N(0, 1/K), so every output is ~ N(0, 1) and float16 cannot
overflow on the seeds. Tolerance: the float16 default (atol 1e-5, rtol 1e-3) plus
eager's own rounding error per element on the seeds (docs/fitness.md); the
reference and a kernel both accumulate in float32 and round once (docs/gpu.md, "Matmul").
"""

import math

import torch
import torch.nn as nn

M = 512  # CPU size; gpu_sizes.json gives the GPU one (4096)
N = 512
K = 512
# Edge sets: "negative" (-|x|: no cancellation, outputs ~ +40, far from the seeds'
# range) and "zeros" (the epilogue alone). Not "large" (x 1e4): terms of ~1e6 summed
# in float32 cancel to outputs near 0 with an absolute error of ~10, which no
# tolerance relative to the output covers; measured at 1024 x 1024 x 4096 against
# the float64 reference, a float32 BLAS fails 18 of 1M float16 outputs (cuBLAS and
# any Triton kernel alike). "tiny" (x 1e-30) underflows to "zeros" in float16.
EDGE_CASES = ["negative", "zeros"]


class Model(nn.Module):
    """a @ b."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs():
    a = torch.randn(M, K).to(torch.float16)
    b = (torch.randn(K, N) / math.sqrt(K)).to(torch.float16)
    return [a, b]


def get_init_inputs():
    return []
