"""Instance normalization (nn.InstanceNorm2d, no affine, no running stats), eps 1e-5: each
(sample, channel) plane normalized over (dim1, dim2).

Input: x float32[batch_size, features, dim1, dim2]; output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
features = 64
dim1 = 32
dim2 = 32


class Model(nn.Module):
    """nn.InstanceNorm2d."""

    def __init__(self, num_features: int):
        super().__init__()
        self.inorm = nn.InstanceNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inorm(x)


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]
