"""Residual add then RMSNorm over the last dim with a weight (eps 1e-6):
h = x + residual; y = h * rsqrt(mean(h^2) + eps) * weight.

Inputs: x, residual float32[batch_size, hidden], param.weight float32[hidden]; output:
float32[batch_size, hidden].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
hidden = 2048


class Model(nn.Module):
    """Residual add and RMSNorm (as in LLaMA-style blocks)."""

    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.eps = 1e-6

    def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        h = x + residual
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return h * self.weight


def get_inputs():
    x = torch.randn(batch_size, hidden)
    residual = torch.randn(batch_size, hidden)
    return [x, residual]


def get_init_inputs():
    return [hidden]
