"""Batched product with a causal mask fused: y = masked_fill(q @ k^T, upper triangle, 0), q, k float32[B, S, D]; output float32[B, S, S] (zeros above the diagonal).

ATen ops (Core ATen capture): aten.permute.default, aten.bmm.default, aten.full.default,
aten.arange.start_step, aten.unsqueeze.default, aten.sub.Tensor, aten.ge.Scalar,
aten.logical_and.default, aten.scalar_tensor.default, aten.where.self.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 8
S = 128
D = 64


class Model(nn.Module):
    """bmm(q, k^T), then masked_fill of the strict upper triangle (mask built in forward)."""

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        s = torch.bmm(q, k.transpose(1, 2))
        upper = torch.ones(S, S, dtype=torch.bool, device=s.device).triu(1)
        return s.masked_fill(upper, 0.0)


def get_inputs():
    return [torch.randn(B, S, D), torch.randn(B, S, D)]


def get_init_inputs():
    return []
