"""Linear layer and ReLU in bfloat16: y = relu(x @ w^T + bias) (F.linear, bias over rows).

Inputs: x bfloat16[M, K], w bfloat16[N, K] (nn.Linear's layout: the template reads it
through transposed strides), bias bfloat16[N]; output: bfloat16[M, N].
Values: x ~ N(0, 1), w ~ N(0, 1/K), bias ~ N(0, 0.1^2): outputs stay O(1).
Tolerance: bfloat16 keeps 8 significant bits (half-ulp 2^-9 = 2e-3 relative). Eager
rounds the matmul result (|x w^T| reaches ~5: 1e-2 absolute) and then the sum with the
bias again; a fused kernel rounds once. Measured on the CPU at M = N = 1024, K = 4096
(float64 accumulation rounded once vs eager bfloat16): max |diff| 0.031, i.e. 0.62 of
the default atol = rtol = 1e-2 bound on 1M outputs, and 16M outputs reach further into
the tail. atol 3e-2, rtol 2e-2 bring that to 0.28 (docs/gpu.md, "Matmul").
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 512  # CPU size; gpu_sizes.json gives the GPU one (4096)
N = 512
K = 512
EDGE_CASES = ["negative", "zeros"]  # matmul.py says why not "large"
TOLERANCE = {"bfloat16": {"atol": 3e-2, "rtol": 2e-2}}


class Model(nn.Module):
    """relu(linear(x, w, bias))."""

    def forward(self, x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return torch.relu(F.linear(x, w, bias))


def get_inputs():
    x = torch.randn(M, K).to(torch.bfloat16)
    w = (torch.randn(N, K) / math.sqrt(K)).to(torch.bfloat16)
    bias = (0.1 * torch.randn(N)).to(torch.bfloat16)
    return [x, w, bias]


def get_init_inputs():
    return []
