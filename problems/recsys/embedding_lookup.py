"""Embedding lookup: y = table[ids] (nn.Embedding), the first op of every sparse feature.

Inputs: ids int64[batch] in [0, num_rows); parameter weight float32[num_rows, dim];
output: float32[batch, dim]. ATen ops (Core ATen capture): aten.embedding.default.
"""

import torch
import torch.nn as nn

num_rows = 50000
dim = 64
batch = 8192


class Model(nn.Module):
    """One embedding table."""

    def __init__(self):
        super().__init__()
        self.table = nn.Embedding(num_rows, dim)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.table(ids)


def get_inputs():
    return [torch.randint(0, num_rows, (batch,), dtype=torch.int64)]


def get_init_inputs():
    return []
