"""Bad problem: forward() multiplies tensors of mismatched shapes, so the reference raises."""

import torch
import torch.nn as nn

batch_size = 4
dim = 8


class Model(nn.Module):
    """x @ y with incompatible inner dimensions."""

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x @ y


def get_inputs():
    return [torch.randn(batch_size, dim), torch.randn(dim + 1, dim)]


def get_init_inputs():
    return []
