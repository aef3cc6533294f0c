"""LogSoftmax over dim 1: y[b, i] = x[b, i] - log(sum_j exp(x[b, j])).

Input: x float32[batch_size, dim]; output: float32[batch_size, dim].
"""

import torch
import torch.nn as nn

batch_size = 256
dim = 4096


class Model(nn.Module):
    """LogSoftmax over dim 1."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log_softmax(x, dim=1)


def get_inputs():
    x = torch.randn(batch_size, dim)
    return [x]


def get_init_inputs():
    return []
