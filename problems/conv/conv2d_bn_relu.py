"""Convolution, batch norm (eval: running statistics), ReLU: y = relu(bn(conv2d(x))), x float32[N, CIN, H, W], conv weight float32[COUT, CIN, 3, 3] (no bias), padding 1; bn weight/bias/running_mean/running_var float32[COUT]; output float32[N, COUT, H, W].

ATen ops (Core ATen capture): aten.convolution.default, aten.empty.memory_format,
aten.native_batch_norm.default, getitem, aten.relu.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
CIN = 16
COUT = 32
H = 32
W = 32


class Model(nn.Module):
    """Conv2d(bias=False) -> BatchNorm2d (eval) -> ReLU."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(CIN, COUT, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(COUT)
        with torch.no_grad():  # non-trivial running statistics
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.2, 0.2)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(N, CIN, H, W)]


def get_init_inputs():
    return []
