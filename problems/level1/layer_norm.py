"""Layer normalization over the last three dims (features, dim1, dim2), eps 1e-5, with an
elementwise affine weight and bias (initialized randomly so they matter).

Inputs: x float32[batch_size, features, dim1, dim2], param.ln.weight and param.ln.bias
float32[features, dim1, dim2]; output: same shape as x.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
features = 64
dim1 = 32
dim2 = 32


class Model(nn.Module):
    """nn.LayerNorm over (features, dim1, dim2)."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)
        with torch.no_grad():
            self.ln.weight.copy_(torch.rand(normalized_shape) + 0.5)
            self.ln.bias.copy_(torch.randn(normalized_shape) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return [(features, dim1, dim2)]
