"""Truncation of jagged event histories to the last k events of each user: the output is
jagged too (sum of min(length, k) rows), a data-dependent length: bounded output
(OUTPUT_BOUNDS, docs/abi.md). The input's total length differs per seed.

Inputs: events float32[total, dim], lengths int64[users];
output: float32[sum(min(lengths, k)), dim] (bound [users * k, dim]).
"""

import torch
import torch.nn as nn

users = 1024
dim = 16
k = 20
max_events = 60

OUTPUT_BOUNDS = {0: (users * k, dim)}


class Model(nn.Module):
    """Keeps event i of user b when i >= lengths[b] - k (its last k)."""

    def forward(self, events: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        ends = torch.cumsum(lengths, 0)
        user = torch.repeat_interleave(torch.arange(lengths.numel(), device=lengths.device), lengths)
        position = torch.arange(events.shape[0], device=events.device) - (ends - lengths)[user]
        keep = position >= (lengths - k)[user]
        return events[keep]


def get_inputs():
    lengths = torch.randint(0, max_events + 1, (users,), dtype=torch.int64)
    return [torch.randn(int(lengths.sum()), dim), lengths]


def get_init_inputs():
    return []
