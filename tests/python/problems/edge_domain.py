"""Test problem: a probability input declared by INPUT_DOMAIN under its ABI name
("input.1"); edge sets that push it outside [0, 1] are skipped, the others written.

forward(x, p) = x * p.
"""

import torch
import torch.nn as nn

batch_size = 3
dim = 8

INPUT_DOMAIN = {"input.1": (0.0, 1.0)}


class Model(nn.Module):
    """Elementwise product with a probability."""

    def forward(self, x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
        return x * p


def get_inputs():
    return [torch.randn(batch_size, dim), torch.rand(batch_size, dim)]


def get_init_inputs():
    return []
