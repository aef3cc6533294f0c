"""Weighted pooled embedding lookup: out[b] = sum_i w_i * table[indices_i] over bag b
(per_sample_weights, mode="sum"), bags of varying length.

Inputs: indices int64[total] (total differs per seed), offsets int64[bags],
weights float32[total]; parameter weight float32[num_rows, dim];
output: float32[bags, dim].
ATen ops (Core ATen capture): aten._embedding_bag.default (or its decomposition).
"""

import torch
import torch.nn as nn

num_rows = 50000
dim = 64
bags = 2048
max_bag = 40


class Model(nn.Module):
    """nn.EmbeddingBag(mode="sum") with per_sample_weights."""

    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(num_rows, dim, mode="sum")

    def forward(self, indices: torch.Tensor, offsets: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
        return self.bag(indices, offsets, per_sample_weights=weights)


def get_inputs():
    lengths = torch.randint(0, max_bag + 1, (bags,), dtype=torch.int64)
    offsets = torch.cumsum(lengths, 0) - lengths
    total = int(lengths.sum())
    return [torch.randint(0, num_rows, (total,), dtype=torch.int64), offsets, torch.rand(total)]


def get_init_inputs():
    return []
