"""Linear layer and GELU: y = gelu(x W^T + b), x float32[M, IN], W float32[OUT, IN], b float32[OUT]; output float32[M, OUT].

ATen ops (Core ATen capture): aten.permute.default, aten.addmm.default, aten.gelu.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 256
IN = 1024
OUT = 1024


class Model(nn.Module):
    """nn.Linear then GELU (erf form)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(IN, OUT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.fc(x))


def get_inputs():
    return [torch.randn(M, IN)]


def get_init_inputs():
    return []
