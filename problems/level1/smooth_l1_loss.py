"""Smooth L1 loss (beta 1), mean over all elements: d = |p - t|; l = 0.5 d^2 / beta if d < beta
else d - 0.5 beta.

Inputs: predictions, targets float32[batch_size, dim]; output: float32[] (a scalar).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 256
dim = 8192


class Model(nn.Module):
    """Smooth L1 loss."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.smooth_l1_loss(predictions, targets)


def get_inputs():
    predictions = torch.randn(batch_size, dim)
    targets = torch.randn(batch_size, dim)
    return [predictions, targets]


def get_init_inputs():
    return []
