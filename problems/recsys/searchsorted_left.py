"""searchsorted, side="left", with ties: for each query the first position in a sorted
sequence holding a value >= it. Queries and the sequence are drawn from the same small
integer range, so many queries equal sequence values.

Inputs: sorted_seq int64[seq_len] (sorted, repeats), queries int64[num_queries];
output: int64[num_queries].
ATen ops (Core ATen capture): aten.searchsorted.Tensor.
"""

import torch
import torch.nn as nn

seq_len = 4096
num_queries = 131072
value_range = 8192


class Model(nn.Module):
    """torch.searchsorted(sorted_seq, queries, side="left")."""

    def forward(self, sorted_seq: torch.Tensor, queries: torch.Tensor) -> torch.Tensor:
        return torch.searchsorted(sorted_seq, queries, side="left")


def get_inputs():
    seq = torch.sort(torch.randint(0, value_range, (seq_len,), dtype=torch.int64)).values
    return [seq, torch.randint(-10, value_range + 10, (num_queries,), dtype=torch.int64)]


def get_init_inputs():
    return []
