"""Bad problem: INPUT_DOMAIN gives x the range (1.0, 0.0): low above high."""

import torch
import torch.nn as nn

batch_size = 4
dim = 8

INPUT_DOMAIN = {"x": (1.0, 0.0)}


class Model(nn.Module):
    """ReLU."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
