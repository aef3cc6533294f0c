"""Float to int64 cast (truncation toward zero): y = (x * 100).to(int64).

Inputs: x float32[rows, cols]; output: int64[rows, cols].
ATen ops (Core ATen capture): aten.mul.Tensor, aten._to_copy.default (dtype int64).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 512
cols = 1024


class Model(nn.Module):
    """Scale and truncate to int64."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x * 100.0).to(torch.int64)


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
