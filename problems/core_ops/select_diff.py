"""Select along a middle dim: y = x[:, 0, :] - x[:, -1, :] (first minus last slot).

Inputs: x float32[batch, slots, dim]; output: float32[batch, dim].
ATen ops (Core ATen capture): aten.select.int, aten.sub.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 128
slots = 4
dim = 2048


class Model(nn.Module):
    """First slot minus last slot."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[:, 0, :] - x[:, -1, :]


def get_inputs():
    x = torch.randn(batch, slots, dim)
    return [x]


def get_init_inputs():
    return []
