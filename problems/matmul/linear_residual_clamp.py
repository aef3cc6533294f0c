"""GEMM with an epilogue: y = clamp(x W^T + b) * 0.5 + x, clamped to [-3, 3]; x float32[B, S, H]; output float32[B, S, H].

ATen ops (Core ATen capture): aten.view.default, aten.permute.default, aten.addmm.default, aten.mul.Tensor, aten.add.Tensor, aten.clamp.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 4
S = 128
H = 512


class Model(nn.Module):
    """Linear, scale, residual add, clamp."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(H, H)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.clamp(self.fc(x) * 0.5 + x, -3.0, 3.0)


def get_inputs():
    return [torch.randn(B, S, H)]


def get_init_inputs():
    return []
