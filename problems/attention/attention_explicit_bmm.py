"""Single-head attention spelled out with torch.bmm on 3-d tensors: y = softmax(q k^T / sqrt(D)) v.

Inputs: q float32[B, SQ, D], k, v float32[B, SK, D] (B sequences of one head each);
output: float32[B, SQ, D]. No mask; the scale is a division.
ATen ops (Core ATen capture): aten.permute.default (k^T), aten.bmm.default (twice),
aten.div.Tensor, aten._softmax.default. The attention family's matcher reads it back as
attention with one head (ir/attention_explicit.h).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 8
SQ = 128
SK = 160
D = 64


class Model(nn.Module):
    """softmax(bmm(q, k^T) / sqrt(D)) v with torch.bmm."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(D)
        return torch.bmm(torch.softmax(scores, dim=-1), v)


def get_inputs():
    return [torch.randn(B, SQ, D), torch.randn(B, SK, D), torch.randn(B, SK, D)]


def get_init_inputs():
    return []
