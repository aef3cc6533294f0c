"""Test problem with parameters: y = (x @ W^T + b) * scale + shift.

state_dict() order is scale, shift (a buffer), lin.weight, lin.bias: own parameters,
own buffers, then the submodule's entries, which is not alphabetical.
"""

import torch
import torch.nn as nn

batch_size = 4
in_features = 8
out_features = 3


class Model(nn.Module):
    """Linear layer followed by a learned scale and a fixed shift."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(out_features))
        self.register_buffer("shift", torch.randn(out_features))
        self.lin = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.lin(x) * self.scale + self.shift


def get_inputs():
    return [torch.randn(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
