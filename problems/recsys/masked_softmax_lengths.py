"""Length-masked softmax over padded sequences (attention over a user's history of
varying length): positions t >= lengths[b] get probability 0; a row of length 0 is all 0.

Inputs: scores float32[batch, max_len], lengths int64[batch] in [0, max_len];
output: float32[batch, max_len].
ATen ops (Core ATen capture): arange, lt, where (masked_fill), amax, sub, exp, sum, div.
"""

import torch
import torch.nn as nn

batch = 4096
max_len = 200


class Model(nn.Module):
    """softmax over the first lengths[b] positions of each row, 0 elsewhere."""

    def forward(self, scores: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        valid = torch.arange(scores.shape[1], device=scores.device)[None, :] < lengths[:, None]
        masked = scores.masked_fill(~valid, float("-inf"))
        peak = masked.amax(dim=1, keepdim=True).clamp(min=-1e30)
        e = torch.exp(masked - peak)
        total = e.sum(dim=1, keepdim=True)
        return torch.where(total > 0, e / total.clamp(min=1e-30), torch.zeros((), dtype=scores.dtype))


def get_inputs():
    return [torch.randn(batch, max_len), torch.randint(0, max_len + 1, (batch,), dtype=torch.int64)]


def get_init_inputs():
    return []
