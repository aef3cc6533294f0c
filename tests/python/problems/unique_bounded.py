"""Test problem: a data-dependent output (the sorted distinct ids, fewer than the ids
when some repeat) declared with OUTPUT_BOUNDS, beside a fixed-shape output."""

import torch
import torch.nn as nn

num_ids = 12
id_range = 10

OUTPUT_BOUNDS = {0: (num_ids,)}


class Model(nn.Module):
    """ids int64[num_ids] -> (unique ids int64[<= num_ids], inverse int64[num_ids])."""

    def forward(self, ids: torch.Tensor):
        unique, inverse = torch.unique(ids, sorted=True, return_inverse=True)
        return unique, inverse


def get_inputs():
    return [torch.randint(0, id_range, (num_ids,), dtype=torch.int64)]


def get_init_inputs():
    return []
