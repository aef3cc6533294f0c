"""Attention with an explicit scale: y = F.scaled_dot_product_attention(q, k, v, scale=0.05).

Inputs: q, k, v float32[B, H, S, D]; output: float32[B, H, S, D].
ATen ops (Core ATen capture; SDPA decomposes): aten.mul.Scalar, aten.permute.default,
aten.expand.default, aten.view.default, aten.bmm.default, aten._softmax.default,
aten.eq.Scalar, aten.logical_not.default, aten.any.dim, aten.full_like.default,
aten.where.self, aten.clone.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 2
H = 4
S = 128
D = 64
SCALE = 0.05


class Model(nn.Module):
    """F.scaled_dot_product_attention with scale= (instead of 1 / sqrt(D))."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, scale=SCALE)


def get_inputs():
    return [torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(B, H, S, D)]


def get_init_inputs():
    return []
