"""Frobenius normalization: y = x / ||x||_F over the whole tensor.

Input: x float32[batch_size, features, dim1, dim2]; output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
features = 64
dim1 = 32
dim2 = 32

# Edge-case input sets (docs/fitness.md): zeros make every output 0/0 = NaN, and tiny inputs
# underflow x^2 to 0 in float32 so the reference is +-inf where the exact answer is finite.
EDGE_CASES = ["negative", "large"]


class Model(nn.Module):
    """Divide by the Frobenius norm of the whole tensor."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        norm = torch.norm(x, p='fro')
        return x / norm


def get_inputs():
    x = torch.randn(batch_size, features, dim1, dim2)
    return [x]


def get_init_inputs():
    return []
