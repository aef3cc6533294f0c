"""Test problem: ReLU restricted to two edge-case sets by EDGE_CASES."""

import torch
import torch.nn as nn

batch_size = 3
dim = 8

EDGE_CASES = ["tiny", "large"]


class Model(nn.Module):
    """ReLU."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
