"""Bad problem: an output whose size depends on the input values, without OUTPUT_BOUNDS
(its three seeds select different numbers of elements from inputs of one shape)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[x > 0]


def get_inputs():
    return [torch.randn(1000)]


def get_init_inputs():
    return []
