"""Two-layer MLP: y = fc2(gelu(fc1(x))).

Inputs: x float32[batch, d_model], param.fc1.weight float32[d_hidden, d_model],
param.fc1.bias float32[d_hidden], param.fc2.weight float32[d_model, d_hidden],
param.fc2.bias float32[d_model]; output: float32[batch, d_model].
ATen ops (Core ATen capture): aten.permute.default, aten.addmm.default (twice), aten.gelu.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 128
d_model = 128
d_hidden = 256


class Model(nn.Module):
    """Linear, GELU, Linear."""

    def __init__(self, d_model: int, d_hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(d_model, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.gelu(self.fc1(x)))


def get_inputs():
    x = torch.randn(batch, d_model)
    return [x]


def get_init_inputs():
    return [d_model, d_hidden]
