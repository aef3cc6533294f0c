"""Distinct ids of a jagged feature (sorted), the batch's length differing per seed:
a data-dependent output length, bounded (OUTPUT_BOUNDS, docs/abi.md).

Inputs: ids int64[total] (total differs per seed, in [0, id_range));
output: int64[<= max_total].
ATen ops (Core ATen capture): aten._unique2.default (or unique_dim / sort).
"""

import torch
import torch.nn as nn

max_total = 131072
id_range = 50000

OUTPUT_BOUNDS = {0: (max_total,)}


class Model(nn.Module):
    """torch.unique(ids, sorted=True)."""

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return torch.unique(ids, sorted=True)


def get_inputs():
    total = int(torch.randint(max_total // 2, max_total + 1, ()))
    return [torch.randint(0, id_range, (total,), dtype=torch.int64)]


def get_init_inputs():
    return []
