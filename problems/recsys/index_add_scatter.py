"""Scatter-add of a varying number of update rows into a fixed table (index_add with
repeated indices), as a gradient of an embedding table is accumulated.

Inputs: table float32[num_rows, dim], index int64[updates] (updates differs per seed,
indices repeat), source float32[updates, dim]; output: float32[num_rows, dim].
ATen ops (Core ATen capture): aten.index_add.default.
"""

import torch
import torch.nn as nn

num_rows = 4096
dim = 64
max_updates = 20000


class Model(nn.Module):
    """table.index_add(0, index, source)."""

    def forward(self, table: torch.Tensor, index: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
        return table.index_add(0, index, source)


def get_inputs():
    updates = int(torch.randint(max_updates // 2, max_updates + 1, ()))
    return [torch.randn(num_rows, dim), torch.randint(0, num_rows, (updates,), dtype=torch.int64),
            torch.randn(updates, dim)]


def get_init_inputs():
    return []
