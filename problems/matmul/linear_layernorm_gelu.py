"""Linear, layer norm, GELU (a transformer MLP's first half): y = gelu(layer_norm(x W^T + b)), x float32[M, IN], W float32[OUT, IN]; output float32[M, OUT].

ATen ops (Core ATen capture): aten.permute.default, aten.addmm.default,
aten.native_layer_norm.default, getitem, aten.gelu.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

M = 256
IN = 512
OUT = 768


class Model(nn.Module):
    """nn.Linear, nn.LayerNorm over the features, then GELU (erf form)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(IN, OUT)
        self.norm = nn.LayerNorm(OUT)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.norm(self.fc(x)))


def get_inputs():
    return [torch.randn(M, IN)]


def get_init_inputs():
    return []
