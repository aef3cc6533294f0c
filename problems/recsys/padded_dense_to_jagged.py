"""Padded dense to jagged: the first lengths[b] rows of each sequence of a padded
[batch, max_len, dim] tensor, concatenated. The output's length is sum(lengths), which
depends on the data: a bounded output (OUTPUT_BOUNDS, docs/abi.md).

Inputs: dense float32[batch, max_len, dim], lengths int64[batch] in [0, max_len];
output: float32[sum(lengths), dim] (bound [batch * max_len, dim]).
"""

import torch
import torch.nn as nn

batch = 512
dim = 32
max_len = 32

OUTPUT_BOUNDS = {0: (batch * max_len, dim)}


class Model(nn.Module):
    """dense[b, :lengths[b]] for every b, concatenated."""

    def forward(self, dense: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        mask = torch.arange(dense.shape[1], device=dense.device)[None, :] < lengths[:, None]
        return dense[mask]


def get_inputs():
    return [torch.randn(batch, max_len, dim), torch.randint(0, max_len + 1, (batch,), dtype=torch.int64)]


def get_init_inputs():
    return []
