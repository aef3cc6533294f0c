"""Matmul with batch broadcasting: y = x @ w, x float32[B, 1, M, K], w float32[H, K, N]; output float32[B, H, M, N].

ATen ops (Core ATen capture): aten.expand.default, aten.clone.default,
aten._unsafe_view.default, aten.bmm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 4
H = 8
M = 32
K = 64
N = 48


class Model(nn.Module):
    """torch.matmul broadcasting [B, 1, M, K] against [H, K, N]."""

    def forward(self, x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.matmul(x, w)


def get_inputs():
    # b ~ N(0, 1/K), as a trained layer's weights: outputs stay O(1) at every K, so float32
    # accumulation error stays inside the float32 tolerance at the GPU sizes (K = 4096+)
    # too; with N(0, 1) operands outputs grow as sqrt(K) and near-zero ones miss atol.
    return [torch.randn(B, 1, M, K), torch.randn(H, K, N) / K ** 0.5]


def get_init_inputs():
    return []
