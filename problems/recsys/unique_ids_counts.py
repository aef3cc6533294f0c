"""Id deduplication before an embedding lookup: the sorted distinct ids of a jagged
batch, the inverse map (position of each id among them) and the count of each. The
number of distinct ids depends on the data: bounded outputs (OUTPUT_BOUNDS, docs/abi.md).

Inputs: ids int64[total] (total differs per seed; ids repeat, drawn from a Zipf-like
skew: floor(range * u^3)); outputs: unique int64[<= total_max], inverse int64[total],
counts int64[<= total_max].
ATen ops (Core ATen capture): aten._unique2.default.
"""

import torch
import torch.nn as nn

max_total = 65536
id_range = 100000

OUTPUT_BOUNDS = {0: (max_total,), 2: (max_total,)}


class Model(nn.Module):
    """torch.unique(ids, sorted=True, return_inverse=True, return_counts=True)."""

    def forward(self, ids: torch.Tensor):
        unique, inverse, counts = torch.unique(ids, sorted=True, return_inverse=True, return_counts=True)
        return unique, inverse, counts


def get_inputs():
    total = int(torch.randint(max_total // 2, max_total + 1, ()))
    return [(torch.rand(total) ** 3 * id_range).to(torch.int64)]


def get_init_inputs():
    return []
