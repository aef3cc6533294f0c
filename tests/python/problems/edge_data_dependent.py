"""Test problem: the output shape depends on the values (the nonzero elements), so the
"zeros" edge set gives another output shape than the seeds and is skipped. The output is
bounded (without the bound, loading refuses the problem: docs/abi.md)."""

import torch
import torch.nn as nn

batch_size = 3
dim = 8
OUTPUT_BOUNDS = {0: (batch_size * dim,)}


class Model(nn.Module):
    """The nonzero elements of x, flattened."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[x != 0]


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
