"""Per-bucket maximum by scatter_reduce: out[b, :] = max(self[b, :], src rows whose index is b).

Inputs: base float32[buckets, dim], index int64[items, dim], src float32[items, dim];
output: float32[buckets, dim].
ATen ops (Core ATen capture): aten.scatter_reduce.two (reduce="amax", include_self=True).
"""

import torch
import torch.nn as nn

buckets = 64
items = 512
dim = 32


class Model(nn.Module):
    """base.scatter_reduce(0, index, src, "amax")."""

    def forward(self, base: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
        return base.scatter_reduce(0, index, src, reduce="amax")


def get_inputs():
    return [torch.randn(buckets, dim), torch.randint(0, buckets, (items, dim)), torch.randn(items, dim)]


def get_init_inputs():
    return []
