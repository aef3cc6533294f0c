"""Test problem: jagged values whose total length differs per seed (lengths drawn from
the seed), summed per segment: every seed gives input.0 another first dimension."""

import torch
import torch.nn as nn

num_segments = 6
dim = 4
max_length = 9


class Model(nn.Module):
    """values float32[total, dim], lengths int64[num_segments] -> float32[num_segments, dim]."""

    def forward(self, values: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        segment = torch.repeat_interleave(torch.arange(lengths.numel()), lengths)
        out = torch.zeros(lengths.numel(), values.shape[1], dtype=values.dtype)
        return out.index_add(0, segment, values)


def get_inputs():
    lengths = torch.randint(0, max_length + 1, (num_segments,), dtype=torch.int64)
    return [torch.randn(int(lengths.sum()), dim), lengths]


def get_init_inputs():
    return []
