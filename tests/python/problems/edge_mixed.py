"""Test problem for edge-case sets: a float input beside an int64 index and a bool mask,
and a parameter. Edge sets transform x only; index, mask and param.weight are kept.

forward(x, index, mask) = gather(where(mask, x * weight, 0), 1, index).
"""

import torch
import torch.nn as nn

batch_size = 3
dim = 8
picks = 4


class Model(nn.Module):
    """Scale by a weight, mask, then gather columns."""

    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.rand(dim) + 0.5)

    def forward(self, x: torch.Tensor, index: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return torch.where(mask, x * self.weight, torch.zeros_like(x)).gather(1, index)


def get_inputs():
    x = torch.randn(batch_size, dim)
    index = torch.randint(0, dim, (batch_size, picks))
    mask = torch.randint(0, 2, (batch_size, dim)).bool()
    return [x, index, mask]


def get_init_inputs():
    return [dim]
