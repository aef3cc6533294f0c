"""Attention scores through einsum: s = einsum("bhqd,bhkd->bhqk", q, k), q float32[B, H, SQ, D], k float32[B, H, SK, D]; output float32[B, H, SQ, SK].

ATen ops (Core ATen capture): aten.unsqueeze.default, aten.permute.default,
aten.view.default, aten.bmm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 2
H = 8
SQ = 64
SK = 96
D = 32


class Model(nn.Module):
    """torch.einsum that lowers to a bmm over (batch, head)."""

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return torch.einsum("bhqd,bhkd->bhqk", q, k)


def get_inputs():
    return [torch.randn(B, H, SQ, D), torch.randn(B, H, SK, D)]


def get_init_inputs():
    return []
