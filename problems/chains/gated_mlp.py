"""Gated MLP (SwiGLU feed-forward): y = (silu(x W1^T) * (x W3^T)) W2^T, no biases.

Inputs: x float32[batch, d_model]; params: w1.weight, w3.weight float32[d_hidden, d_model],
w2.weight float32[d_model, d_hidden]; output: float32[batch, d_model].
ATen ops (Core ATen capture): aten.permute.default, aten.mm.default (three times),
aten.silu.default (kept: pointwise_rules.cpp), aten.mul.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 128
d_model = 128
d_hidden = 256


class Model(nn.Module):
    """silu gate times up projection, then down projection."""

    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_hidden, bias=False)
        self.w3 = nn.Linear(d_model, d_hidden, bias=False)
        self.w2 = nn.Linear(d_hidden, d_model, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def get_inputs():
    x = torch.randn(batch, d_model)
    return [x]


def get_init_inputs():
    return [d_model, d_hidden]
