"""Id remapping through a sorted table: raw ids are looked up in a sorted table of known
ids (binary search); a found id becomes its row in the table, a missing one the default
row 0 ("out of vocabulary"). The batch is jagged, its length differs per seed.

Inputs: raw int64[total] (total differs per seed), known int64[table_size] (sorted,
distinct); output: int64[total].
ATen ops (Core ATen capture): searchsorted, clamp, index, eq, where.
"""

import torch
import torch.nn as nn

table_size = 65536
id_range = 1 << 20
max_total = 131072


class Model(nn.Module):
    """pos = searchsorted(known, raw); known[pos] == raw ? pos + 1 : 0 (row 0 = missing)."""

    def forward(self, raw: torch.Tensor, known: torch.Tensor) -> torch.Tensor:
        pos = torch.searchsorted(known, raw).clamp(max=known.numel() - 1)
        found = known[pos] == raw
        return torch.where(found, pos + 1, torch.zeros((), dtype=torch.int64))


def get_inputs():
    known = torch.randperm(id_range)[:table_size].sort().values
    total = int(torch.randint(max_total // 2, max_total + 1, ()))
    return [torch.randint(0, id_range, (total,), dtype=torch.int64), known]


def get_init_inputs():
    return []
