"""Pairwise Euclidean distances between two point sets (torch.cdist, p = 2).

Inputs: a float32[batch, n, features], b float32[batch, m, features];
output: float32[batch, n, m].
ATen ops (Core ATen capture): aten._cdist_forward.default.
"""

import torch
import torch.nn as nn

batch = 4
n = 128
m = 96
features = 32


class Model(nn.Module):
    """torch.cdist(a, b)."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.cdist(a, b)


def get_inputs():
    return [torch.randn(batch, n, features), torch.randn(batch, m, features)]


def get_init_inputs():
    return []
