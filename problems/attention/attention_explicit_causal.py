"""Causal attention spelled out: y = softmax(q k^T / sqrt(D) + causal mask) v with matmul and masked_fill.

Inputs: q, k, v float32[B, H, S, D]; output: float32[B, H, S, D]. The mask is
torch.triu(ones(S, S), 1) as -inf (row i sees keys j <= i), built inside forward().
ATen ops (Core ATen capture): aten.permute.default, aten.expand.default,
aten.view.default, aten.bmm.default, aten._unsafe_view.default, aten.mul.Tensor,
aten.full.default, aten.arange.start_step, aten.unsqueeze.default, aten.sub.Tensor,
aten.ge.Scalar, aten.logical_and.default, aten.scalar_tensor.default, aten.where.self,
aten._softmax.default (the triu mask becomes arange comparisons). The attention
family's matcher reads it back as causal attention (ir/attention_explicit.h) and gives
it the same fused kernel as F.scaled_dot_product_attention(is_causal=True).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 2
H = 4
S = 96
D = 32


class Model(nn.Module):
    """softmax(q k^T * D^-0.5, masked above the diagonal) v."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) * (D ** -0.5)
        future = torch.triu(torch.ones(S, S, dtype=torch.bool, device=q.device), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(B, H, S, D)]


def get_init_inputs():
    return []
