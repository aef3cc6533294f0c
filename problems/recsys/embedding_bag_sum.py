"""Pooled embedding lookup (sum), bags of varying length given by their start offsets
(include_last_offset=False); some bags are empty (their row is 0).

Inputs: indices int64[total] (total = sum of the bag lengths, drawn per seed, so it
differs between seeds), offsets int64[bags] (start of each bag, offsets[0] = 0);
parameter weight float32[num_rows, dim]; output: float32[bags, dim].
ATen ops (Core ATen capture): aten._embedding_bag.default (or its decomposition).
"""

import torch
import torch.nn as nn

num_rows = 50000
dim = 64
bags = 2048
max_bag = 40


class Model(nn.Module):
    """nn.EmbeddingBag(mode="sum")."""

    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(num_rows, dim, mode="sum")

    def forward(self, indices: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.bag(indices, offsets)


def get_inputs():
    lengths = torch.randint(0, max_bag + 1, (bags,), dtype=torch.int64)
    offsets = torch.cumsum(lengths, 0) - lengths
    indices = torch.randint(0, num_rows, (int(lengths.sum()),), dtype=torch.int64)
    return [indices, offsets]


def get_init_inputs():
    return []
