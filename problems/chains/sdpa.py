"""Fused attention call: y = F.scaled_dot_product_attention(q, k, v) (no mask, no dropout).

Inputs: q, k, v float32[batch, heads, seq, head_dim]; output: float32[batch, heads, seq, head_dim].
ATen ops (Core ATen capture; SDPA kept whole for the attention family):
aten._scaled_dot_product_flash_attention_for_cpu.default, getitem.
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
