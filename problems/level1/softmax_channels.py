"""Softmax over dim 1 (channels) of a 3-D tensor: y[b, c, l] = exp(x[b, c, l]) / sum_k exp(x[b, k, l]).

Input: x float32[batch_size, channels, length]; output: same shape.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 16
channels = 64
length = 2048


class Model(nn.Module):
    """Softmax over the channel dim."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    x = torch.randn(batch_size, channels, length)
    return [x]


def get_init_inputs():
    return []
