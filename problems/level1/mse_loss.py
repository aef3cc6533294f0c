"""Mean squared error: y = mean((predictions - targets)^2) over all elements.

Inputs: predictions, targets float32[batch_size, dim]; output: float32[] (a scalar).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
dim = 8192


class Model(nn.Module):
    """Mean squared error."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean((predictions - targets) ** 2)


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return []
