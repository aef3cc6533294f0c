"""Attention spelled out: y = softmax(Q K^T / sqrt(d)) V with torch.bmm.

Inputs: q, k, v float32[batch_heads, seq, head_dim]; output: float32[batch_heads, seq, head_dim].
ATen ops (Core ATen capture): aten.permute.default (K^T), aten.bmm.default (twice),
aten.mul.Tensor, aten._softmax.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_heads = 8
seq = 128
head_dim = 64


class Model(nn.Module):
    """Scaled dot-product attention with explicit bmm and softmax."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.bmm(q, k.transpose(1, 2)) * (1.0 / head_dim ** 0.5)
        return torch.bmm(torch.softmax(scores, dim=-1), v)


def get_inputs():
    q = torch.randn(batch_heads, seq, head_dim)
    k = torch.randn(batch_heads, seq, head_dim)
    v = torch.randn(batch_heads, seq, head_dim)
    return [q, k, v]


def get_init_inputs():
    return []
