"""Bad problem: the seed changes an input's dtype (only sizes may vary between seeds)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * 2


def get_inputs():
    dtype = torch.float32 if torch.initial_seed() == 0 else torch.float64
    return [torch.randn(4, dtype=dtype)]


def get_init_inputs():
    return []
