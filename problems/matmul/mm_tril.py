"""Matrix product keeping the lower triangle: y = tril(a @ b), a float32[M, K], b float32[K, M]; output float32[M, M].

ATen ops (Core ATen capture): aten.mm.default, aten.arange.start_step,
aten.unsqueeze.default, aten.sub.Tensor, aten.le.Scalar, aten.scalar_tensor.default,
aten.where.self.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 384
K = 256


class Model(nn.Module):
    """torch.tril of torch.mm."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.tril(torch.mm(a, b))


def get_inputs():
    # b ~ N(0, 1/K), as a trained layer's weights: outputs stay O(1) at every K, so float32
    # accumulation error stays inside the float32 tolerance at the GPU sizes (K = 4096+)
    # too; with N(0, 1) operands outputs grow as sqrt(K) and near-zero ones miss atol.
    return [torch.randn(M, K), torch.randn(K, M) / K ** 0.5]


def get_init_inputs():
    return []
