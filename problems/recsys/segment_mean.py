"""Segment mean over a jagged tensor (empty segments give 0): the mean pooling of a
user's history of varying length.

Inputs: values float32[total, dim] (total differs per seed), lengths int64[segments];
output: float32[segments, dim].
ATen ops (Core ATen capture): repeat_interleave, index_add, clamp, div.
"""

import torch
import torch.nn as nn

segments = 1024
dim = 64
max_seg = 40


class Model(nn.Module):
    """Segment sum divided by max(length, 1)."""

    def forward(self, values: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        segment = torch.repeat_interleave(torch.arange(lengths.numel(), device=lengths.device), lengths)
        sums = torch.zeros(lengths.numel(), values.shape[1], dtype=values.dtype, device=values.device).index_add(0, segment, values)
        return sums / lengths.clamp(min=1).to(values.dtype)[:, None]


def get_inputs():
    lengths = torch.randint(0, max_seg + 1, (segments,), dtype=torch.int64)
    return [torch.randn(int(lengths.sum()), dim), lengths]


def get_init_inputs():
    return []
