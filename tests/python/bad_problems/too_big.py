"""Bad problem: one input of 100000 x 100000 float32 (40 GB); the memory check must refuse it."""

import torch
import torch.nn as nn

batch_size = 100000
dim = 100000


class Model(nn.Module):
    """ReLU on a huge tensor."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
