"""Segment sum over a jagged tensor: out[b] = sum of values[offsets[b]:offsets[b+1]],
written as index_add over segment ids (empty segments give 0).

Inputs: values float32[total, dim] (total differs per seed), lengths int64[segments];
output: float32[segments, dim].
ATen ops (Core ATen capture): repeat_interleave, arange, index_add (or scatter_add).
"""

import torch
import torch.nn as nn

segments = 1024
dim = 64
max_seg = 40


class Model(nn.Module):
    """index_add of every value row into its segment's row."""

    def forward(self, values: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        segment = torch.repeat_interleave(torch.arange(lengths.numel(), device=lengths.device), lengths)
        out = torch.zeros(lengths.numel(), values.shape[1], dtype=values.dtype, device=values.device)
        return out.index_add(0, segment, values)


def get_inputs():
    lengths = torch.randint(0, max_seg + 1, (segments,), dtype=torch.int64)
    return [torch.randn(int(lengths.sum()), dim), lengths]


def get_init_inputs():
    return []
