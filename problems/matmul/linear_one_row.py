"""Linear layer on a single row (a matrix-vector product with bias): y = x W^T + b, x float32[1, IN], W float32[OUT, IN], b float32[OUT]; output float32[1, OUT].

ATen ops (Core ATen capture): aten.permute.default, aten.addmm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

IN = 2048
OUT = 1024


class Model(nn.Module):
    """nn.Linear applied to one row (decode-style GEMV)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(IN, OUT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x)


def get_inputs():
    return [torch.randn(1, IN)]


def get_init_inputs():
    return []
