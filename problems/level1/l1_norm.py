"""L1 normalization over dim 1: y[b, i] = x[b, i] / sum_j |x[b, j]|.

Input: x float32[batch_size, dim]; output: float32[batch_size, dim].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
dim = 8192

# Edge-case input sets (docs/fitness.md): zeros make every output 0/0 = NaN in the reference (a degenerate check).
EDGE_CASES = ["negative", "large", "tiny"]


class Model(nn.Module):
    """L1 normalization of each row."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x / torch.sum(torch.abs(x), dim=1, keepdim=True)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
