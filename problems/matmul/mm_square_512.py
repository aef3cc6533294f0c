"""Square fp32 matmul: y = a @ b, a, b float32[N, N], N = 512; output float32[N, N].

ATen ops (Core ATen capture): aten.mm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 512


class Model(nn.Module):
    """a @ b."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a @ b


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N) / N ** 0.5]


def get_init_inputs():
    return []
