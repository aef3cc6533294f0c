"""Bad problem: an item assignment in forward() makes a Python number a 0-d tensor constant."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x.clone()
        y[0] = 3.0
        return y


def get_inputs():
    return [torch.randn(16)]


def get_init_inputs():
    return []
