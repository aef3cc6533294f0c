"""Jagged to padded dense: sequences of varying length (values + offsets) written into a
[batch, max_len, dim] tensor, truncated at max_len and padded with 0.

Inputs: values float32[total, dim] (total differs per seed), offsets int64[batch + 1];
output: float32[batch, max_len, dim].
ATen ops (Core ATen capture): arange, sub, lt, clamp, index, where (data-dependent
gather written with dense ops).
"""

import torch
import torch.nn as nn

batch = 512
dim = 32
max_len = 32
max_seq = 48


class Model(nn.Module):
    """out[b, t] = values[offsets[b] + t] when t < min(length[b], max_len), else 0."""

    def forward(self, values: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
        lengths = offsets[1:] - offsets[:-1]
        t = torch.arange(max_len, dtype=torch.int64, device=values.device)
        valid = t[None, :] < lengths[:, None]
        rows = (offsets[:-1, None] + t[None, :]).clamp(max=max(values.shape[0] - 1, 0))
        gathered = values[rows]
        return torch.where(valid[:, :, None], gathered, torch.zeros((), dtype=values.dtype))


def get_inputs():
    lengths = torch.randint(1, max_seq + 1, (batch,), dtype=torch.int64)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(lengths, 0)])
    return [torch.randn(int(lengths.sum()), dim), offsets]


def get_init_inputs():
    return []
