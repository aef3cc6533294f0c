"""Feature bucketization with ties: bucket ids of dense features against sorted
boundaries, right=True (a value equal to a boundary goes to the bucket above it).
Values are quantized to a grid that contains every boundary, so ties occur.

Inputs: x float32[rows, features]; buffer boundaries float32[num_boundaries] (sorted,
a module buffer: the edge-case sets transform forward()'s arguments only, and "negative"
would unsort them); output: int64[rows, features].
ATen ops (Core ATen capture): aten.bucketize.Tensor.
"""

import torch
import torch.nn as nn

rows = 4096
features = 32
num_boundaries = 63


class Model(nn.Module):
    """torch.bucketize(x, boundaries, right=True)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("boundaries", torch.linspace(-4.0, 4.0, num_boundaries))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.bucketize(x, self.boundaries, right=True)


def get_inputs():
    # On the grid of the boundaries (step 8 / (num_boundaries - 1)), so that ties occur.
    return [torch.round(torch.randn(rows, features) * (num_boundaries - 1) / 8.0) * (8.0 / (num_boundaries - 1))]


def get_init_inputs():
    return []
