"""Attention with an additive float mask (a learned-bias style term): y = F.scaled_dot_product_attention(q, k, v, attn_mask=bias).

Inputs: q, k, v float32[B, H, S, D], bias float32[1, H, S, S] (added to the scaled
scores, broadcast over the batch); output: float32[B, H, S, D].
ATen ops (Core ATen capture; SDPA kept whole for the attention family):
aten._scaled_dot_product_flash_attention_for_cpu.default, getitem.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 2
H = 4
S = 96
D = 32


class Model(nn.Module):
    """F.scaled_dot_product_attention with a float attn_mask."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=bias)


def get_inputs():
    return [torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(1, H, S, S)]


def get_init_inputs():
    return []
