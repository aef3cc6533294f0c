"""Hinge loss: y = mean(max(0, 1 - predictions * targets)) with targets in {-1, +1}.

Inputs: predictions, targets float32[batch_size, dim]; output: float32[] (a scalar).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
dim = 8192


class Model(nn.Module):
    """Hinge loss."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return torch.mean(torch.clamp(1 - predictions * targets, min=0))


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randint(0, 2, (batch_size, dim)).float() * 2 - 1
    return [predictions, targets]


def get_init_inputs():
    return []
