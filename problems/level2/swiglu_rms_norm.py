"""SwiGLU gate then RMSNorm over the last dim with a weight (eps 1e-6):
h = silu(gate) * up; y = h * rsqrt(mean(h^2) + eps) * weight.

Inputs: gate, up float32[batch_size, hidden], param.weight float32[hidden]; output:
float32[batch_size, hidden].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
hidden = 2048


class Model(nn.Module):
    """SiLU-gated product then RMSNorm."""

    def __init__(self, hidden: int):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(hidden) + 0.5)
        self.eps = 1e-6

    def forward(self, gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
        h = F.silu(gate) * up
        return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def get_inputs():
    gate = torch.randn(batch_size, hidden)
    up = torch.randn(batch_size, hidden)
    return [gate, up]


def get_init_inputs():
    return [hidden]
