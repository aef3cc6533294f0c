"""Standard deviation (Bessel-corrected) over the two trailing dims: y = x.std(dim=(1, 2)).

Inputs: x float32[a, b, c]; output: float32[a].
ATen ops (Core ATen capture): aten.std.correction (kept: lower_compound.cpp lowers it).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

a = 64
b = 64
c = 128


class Model(nn.Module):
    """Sample std over dims 1 and 2."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.std(dim=(1, 2))


def get_inputs():
    x = torch.randn(a, b, c)
    return [x]


def get_init_inputs():
    return []
