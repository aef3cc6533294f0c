"""Attention with a boolean mask: y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask).

Inputs: q float32[B, H, SQ, D], k, v float32[B, H, SK, D], mask bool[B, 1, SQ, SK]
(True = attend; broadcast over heads; every query row keeps at least one key, so no
row is fully masked); output: float32[B, H, SQ, D].
ATen ops (Core ATen capture; SDPA kept whole for the attention family):
aten.scalar_tensor.default, aten.where.self,
aten._scaled_dot_product_flash_attention_for_cpu.default, getitem. The bool mask becomes an
additive float mask (where(mask, 0, -inf)) before the attention node.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 2
H = 4
SQ = 64
SK = 96
D = 32


class Model(nn.Module):
    """F.scaled_dot_product_attention with a bool attn_mask."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


def get_inputs():
    mask = torch.rand(B, 1, SQ, SK) > 0.3
    mask[..., 0] = True  # no fully masked row
    return [torch.randn(B, H, SQ, D), torch.randn(B, H, SK, D), torch.randn(B, H, SK, D), mask]


def get_init_inputs():
    return []
