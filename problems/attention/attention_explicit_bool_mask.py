"""Attention spelled out with a key padding mask: y = softmax(q k^T / sqrt(D), masked_fill(pad, -inf)) v.

Inputs: q float32[B, H, SQ, D], k, v float32[B, H, SK, D], pad bool[B, 1, 1, SK]
(True = a padded key, dropped for every head and query; key 0 is never padded, so no
row is fully masked); output: float32[B, H, SQ, D].
ATen ops (Core ATen capture): aten.permute.default, aten.expand.default,
aten.view.default, aten.bmm.default, aten._unsafe_view.default, aten.div.Tensor,
aten.scalar_tensor.default, aten.where.self (masked_fill(pad, -inf) as
where(pad, -inf, scores)), aten._softmax.default. The attention family's matcher reads
it back as attention with a bool mask whose True drops the key (ir/attention_explicit.h).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 2
H = 4
SQ = 64
SK = 96
D = 32


class Model(nn.Module):
    """softmax(q k^T / sqrt(D) with padded keys at -inf) v."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(D)
        scores = scores.masked_fill(pad, float("-inf"))
        return torch.matmul(torch.softmax(scores, dim=-1), v)


def get_inputs():
    pad = torch.rand(B, 1, 1, SK) < 0.3
    pad[..., 0] = False  # no fully masked row
    return [torch.randn(B, H, SQ, D), torch.randn(B, H, SK, D), torch.randn(B, H, SK, D), pad]


def get_init_inputs():
    return []
