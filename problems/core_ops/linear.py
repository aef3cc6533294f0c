"""Linear layer: y = x W^T + b (nn.Linear).

Inputs: x float32[batch, in_features], param.fc.weight float32[out_features, in_features],
param.fc.bias float32[out_features]; output: float32[batch, out_features].
ATen ops (Core ATen capture): aten.permute.default (W^T), aten.addmm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 256
in_features = 256
out_features = 256


class Model(nn.Module):
    """nn.Linear."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def get_inputs():
    x = torch.randn(batch, in_features)
    return [x]


def get_init_inputs():
    return [in_features, out_features]
