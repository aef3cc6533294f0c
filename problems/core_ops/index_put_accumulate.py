"""Row accumulation through advanced indexing: table.index_put_((rows,), updates,
accumulate=True) on a copy (duplicate rows add up; negative rows wrap).

Inputs: table float32[num_rows, dim], rows int64[updates], updates float32[updates, dim];
output: float32[num_rows, dim].
ATen ops (Core ATen capture): aten.index_put.default (accumulate=True).
"""

import torch
import torch.nn as nn

num_rows = 256
updates = 1024
dim = 16


class Model(nn.Module):
    """table with updates added at rows (duplicates accumulate)."""

    def forward(self, table: torch.Tensor, rows: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        return table.index_put((rows,), values, accumulate=True)


def get_inputs():
    return [torch.randn(num_rows, dim), torch.randint(-num_rows, num_rows, (updates,)), torch.randn(updates, dim)]


def get_init_inputs():
    return []
