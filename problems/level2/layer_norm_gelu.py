"""LayerNorm over the last dim (eps 1e-5, affine) then exact GELU.

Inputs: x float32[batch_size, hidden], param.ln.weight and param.ln.bias float32[hidden];
output: float32[batch_size, hidden].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
hidden = 2048


class Model(nn.Module):
    """Layer norm then GELU."""

    def __init__(self, hidden: int):
        super().__init__()
        self.ln = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.ln.weight.copy_(torch.rand(hidden) + 0.5)
            self.ln.bias.copy_(torch.randn(hidden) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.gelu(self.ln(x))


def get_inputs():
    x = torch.randn(batch_size, hidden)
    return [x]


def get_init_inputs():
    return [hidden]
