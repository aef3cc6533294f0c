"""Causal attention: y = F.scaled_dot_product_attention(q, k, v, is_causal=True).

Inputs: q, k, v float32[B, H, S, D]; output: float32[B, H, S, D].
ATen ops (Core ATen capture; SDPA decomposes): aten.mul.Scalar, aten.full.default,
aten.arange.start_step, aten.unsqueeze.default, aten.sub.Tensor, aten.le.Scalar,
aten.logical_and.default, aten.scalar_tensor.default, aten.where.self,
aten.permute.default, aten.expand.default, aten.view.default, aten.bmm.default,
aten.add.Tensor, aten._softmax.default, aten.eq.Scalar, aten.logical_not.default,
aten.any.dim, aten.full_like.default, aten.clone.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 2
H = 4
S = 128
D = 32


class Model(nn.Module):
    """F.scaled_dot_product_attention with is_causal=True."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def get_inputs():
    return [torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(B, H, S, D)]


def get_init_inputs():
    return []
