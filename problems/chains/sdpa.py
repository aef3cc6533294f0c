"""Fused attention call: y = F.scaled_dot_product_attention(q, k, v) (no mask, no dropout).

Inputs: q, k, v float32[batch, heads, seq, head_dim]; output: float32[batch, heads, seq, head_dim].
ATen ops (Core ATen capture; SDPA decomposes): aten.mul.Scalar, aten.permute.default,
aten.expand.default, aten.view.default, aten.bmm.default (twice), aten._softmax.default,
aten.eq.Scalar, aten.logical_not.default, aten.any.dim, aten.full_like.default,
aten.where.self, aten.clone.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 2
heads = 4
seq = 64
head_dim = 32


class Model(nn.Module):
    """F.scaled_dot_product_attention."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v)


def get_inputs():
    q = torch.randn(batch, heads, seq, head_dim)
    k = torch.randn(batch, heads, seq, head_dim)
    v = torch.randn(batch, heads, seq, head_dim)
    return [q, k, v]


def get_init_inputs():
    return []
