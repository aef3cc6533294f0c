"""Matrix-vector product: y = torch.mv(a, x), a float32[M, K], x float32[K]; output float32[M].

ATen ops (Core ATen capture): aten.mul.Tensor, aten.sum.dim_IntList.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 2048
K = 1024


class Model(nn.Module):
    """torch.mv."""

    def forward(self, a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return torch.mv(a, x)


def get_inputs():
    # b ~ N(0, 1/K), as a trained layer's weights: outputs stay O(1) at every K, so float32
    # accumulation error stays inside the float32 tolerance at the GPU sizes (K = 4096+)
    # too; with N(0, 1) operands outputs grow as sqrt(K) and near-zero ones miss atol.
    return [torch.randn(M, K), torch.randn(K) / K ** 0.5]


def get_init_inputs():
    return []
