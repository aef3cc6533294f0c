"""Attention with an explicit scale: y = F.scaled_dot_product_attention(q, k, v, scale=0.05).

Inputs: q, k, v float32[B, H, S, D]; output: float32[B, H, S, D].
ATen ops (Core ATen capture; SDPA kept whole for the attention family):
aten._scaled_dot_product_flash_attention_for_cpu.default, getitem.
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
