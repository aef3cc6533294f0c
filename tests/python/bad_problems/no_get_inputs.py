"""Bad problem: defines Model and get_init_inputs but no get_inputs()."""

import torch
import torch.nn as nn

batch_size = 4
dim = 8


class Model(nn.Module):
    """ReLU."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_init_inputs():
    return []
