"""Linear, LayerNorm, Linear: y = fc2(layer_norm(fc1(x))).

Inputs: x float32[batch, d_in]; params: fc1 float32[d_hidden, d_in] + [d_hidden],
norm weight/bias float32[d_hidden], fc2 float32[d_out, d_hidden] + [d_out];
output: float32[batch, d_out].
ATen ops (Core ATen capture): aten.permute.default, aten.addmm.default (twice),
aten.native_layer_norm.default, getitem.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 128
d_in = 128
d_hidden = 256
d_out = 128


class Model(nn.Module):
    """Projection, normalization, projection."""

    def __init__(self, d_in: int, d_hidden: int, d_out: int):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.norm = nn.LayerNorm(d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.norm(self.fc1(x)))


def get_inputs():
    x = torch.randn(batch, d_in)
    return [x]


def get_init_inputs():
    return [d_in, d_hidden, d_out]
