"""x * sigmoid(x) + bias, then LayerNorm over the last dim (eps 1e-5, affine).

Inputs: x float32[batch_size, hidden], param.bias float32[hidden], param.ln.weight and
param.ln.bias float32[hidden]; output: float32[batch_size, hidden].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 1024
hidden = 2048


class Model(nn.Module):
    """Swish, bias add, layer norm."""

    def __init__(self, hidden: int):
        super().__init__()
        self.bias = nn.Parameter(torch.randn(hidden) * 0.1)
        self.ln = nn.LayerNorm(hidden)
        with torch.no_grad():
            self.ln.weight.copy_(torch.rand(hidden) + 0.5)
            self.ln.bias.copy_(torch.randn(hidden) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x * torch.sigmoid(x) + self.bias
        return self.ln(x)


def get_inputs():
    x = torch.randn(batch_size, hidden)
    return [x]


def get_init_inputs():
    return [hidden]
