"""Test problem: integer input only, so no edge-case set applies (each is skipped)."""

import torch
import torch.nn as nn

batch_size = 3
dim = 8


class Model(nn.Module):
    """Doubles an int64 tensor."""

    def forward(self, counts: torch.Tensor) -> torch.Tensor:
        return counts * 2


def get_inputs():
    return [torch.randint(0, 10, (batch_size, dim))]


def get_init_inputs():
    return []
