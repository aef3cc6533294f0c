"""L2-normalize each row (F.normalize, eps 1e-12) then scale by a learned gain per column.

Inputs: x float32[batch_size, hidden], param.gain float32[hidden]; output: float32[batch_size, hidden].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
hidden = 2048


class Model(nn.Module):
    """Row L2 normalization and gain."""

    def __init__(self, hidden: int):
        super().__init__()
        self.gain = nn.Parameter(torch.rand(hidden) + 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.normalize(x, p=2.0, dim=1) * self.gain


def get_inputs():
    x = torch.randn(batch_size, hidden)
    return [x]


def get_init_inputs():
    return [hidden]
