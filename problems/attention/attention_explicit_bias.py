"""Attention spelled out with the scale on q and an additive bias: y = softmax((q * D^-0.5) k^T + bias) v.

Inputs: q, k, v float32[B, H, S, D], bias float32[1, H, S, S] (a learned per-head
bias, broadcast over the batch); output: float32[B, H, S, D].
ATen ops (Core ATen capture): aten.mul.Tensor (on q, before the product),
aten.permute.default, aten.expand.default, aten.view.default, aten.bmm.default,
aten._unsafe_view.default, aten.add.Tensor, aten._softmax.default. The attention
family's matcher reads it back as attention with an additive mask
(ir/attention_explicit.h).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 2
H = 4
S = 96
D = 32


class Model(nn.Module):
    """softmax((q / sqrt(D)) k^T + bias) v."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        scores = (q * D ** -0.5) @ k.transpose(-2, -1) + bias
        return torch.softmax(scores, dim=-1) @ v


def get_inputs():
    return [torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(B, H, S, D), torch.randn(1, H, S, S)]


def get_init_inputs():
    return []
