"""Group normalization, 8 groups over 64 channels, eps 1e-5, with per-channel affine weight
and bias (initialized randomly).

Inputs: x float32[batch_size, features, dim1, dim2], param.gn.weight and param.gn.bias
float32[features]; output: same shape as x.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
features = 64
dim1 = 32
dim2 = 32
num_groups = 8


class Model(nn.Module):
    """nn.GroupNorm."""

    def __init__(self, num_features: int, num_groups: int):
        super().__init__()
        self.gn = nn.GroupNorm(num_groups=num_groups, num_channels=num_features)
        with torch.no_grad():
            self.gn.weight.copy_(torch.rand(num_features) + 0.5)
            self.gn.bias.copy_(torch.randn(num_features) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.gn(x)


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features, num_groups]
