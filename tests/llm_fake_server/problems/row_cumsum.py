"""Row-wise prefix sum: y = torch.cumsum(x, dim=1). A test problem outside problems/,
for the LLM operator's end-to-end test (the fake server has a recorded kernel for it).

Input: x float32[batch_size, dim]; output: float32[batch_size, dim].
"""

import torch
import torch.nn as nn

batch_size = 16
dim = 1024


class Model(nn.Module):
    """Prefix sum over the last dimension."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cumsum(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
