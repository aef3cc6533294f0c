"""Bad problem: the input tensor is complex64, which no kernel ABI dtype covers."""

import torch
import torch.nn as nn

batch_size = 4
dim = 8


class Model(nn.Module):
    """Magnitude of a complex input."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.abs()


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.complex64)]


def get_init_inputs():
    return []
