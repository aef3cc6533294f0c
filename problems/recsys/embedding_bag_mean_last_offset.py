"""Pooled embedding lookup (mean) with offsets that include the end of the last bag
(include_last_offset=True, the CSR layout of TorchRec's KeyedJaggedTensor); empty
bags give 0.

Inputs: indices int64[total] (total differs per seed), offsets int64[bags + 1]
(offsets[bags] = total); parameter weight float32[num_rows, dim];
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
    """nn.EmbeddingBag(mode="mean", include_last_offset=True)."""

    def __init__(self):
        super().__init__()
        self.bag = nn.EmbeddingBag(num_rows, dim, mode="mean", include_last_offset=True)

    def forward(self, indices: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        return self.bag(indices, offsets)


def get_inputs():
    lengths = torch.randint(0, max_bag + 1, (bags,), dtype=torch.int64)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(lengths, 0)])
    indices = torch.randint(0, num_rows, (int(lengths.sum()),), dtype=torch.int64)
    return [indices, offsets]


def get_init_inputs():
    return []
