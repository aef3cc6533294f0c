"""Bad problem: INPUT_DOMAIN names "y", which is not a forward() argument."""

import torch
import torch.nn as nn

batch_size = 4
dim = 8

INPUT_DOMAIN = {"y": (0.0, 1.0)}


class Model(nn.Module):
    """ReLU."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
