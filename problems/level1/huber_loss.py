"""Huber loss with delta 0.5, mean over all elements: d = |p - t|; l = 0.5 d^2 if d < delta
else delta (d - 0.5 delta).

Inputs: predictions, targets float32[batch_size, dim]; output: float32[] (a scalar).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
dim = 8192


class Model(nn.Module):
    """Huber loss."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.huber_loss(predictions, targets, delta=0.5)


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return []
