"""RMS normalization over the feature dim (dim 1): y = x / sqrt(mean_c(x^2) + eps), eps 1e-5.

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
    """RMS normalization over dim 1."""

    def __init__(self, num_features: int, eps: float = 1e-5):
        super().__init__()
        self.num_features = num_features
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rms = torch.sqrt(torch.mean(x ** 2, dim=1, keepdim=True) + self.eps)
        return x / rms


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [features]
