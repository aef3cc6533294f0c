"""Inference batch norm (fixed statistics, affine, eps 1e-5) then ReLU.

Inputs: x float32[batch_size, features, dim1, dim2], then param.weight, param.bias,
param.running_mean, param.running_var float32[features]; output: same shape as x.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
features = 64
dim1 = 32
dim2 = 32


class Model(nn.Module):
    """Batch norm (inference) then ReLU."""

    def __init__(self, num_features: int):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(num_features) + 0.5)
        self.bias = nn.Parameter(torch.randn(num_features) * 0.1)
        self.register_buffer("running_mean", torch.randn(num_features) * 0.1)
        self.register_buffer("running_var", torch.rand(num_features) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.batch_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                         training=False, eps=1e-5)
        return torch.relu(x)


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]
