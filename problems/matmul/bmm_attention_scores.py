"""Batched attention scores: s = q @ k^T * scale, q, k float32[B, S, D]; output float32[B, S, S].

ATen ops (Core ATen capture): aten.permute.default, aten.bmm.default, aten.mul.Tensor (via expand / view).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 16
S = 128
D = 64


class Model(nn.Module):
    """(q @ k.transpose(1, 2)) / sqrt(D)."""

    def forward(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        return torch.bmm(q, k.transpose(1, 2)) * (D ** -0.5)


def get_inputs():
    return [torch.randn(B, S, D), torch.randn(B, S, D)]


def get_init_inputs():
    return []
