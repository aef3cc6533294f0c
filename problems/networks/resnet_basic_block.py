"""ResNet basic block (eval mode): y = relu(bn2(conv2(relu(bn1(conv1(x))))) + x).

Inputs: x float32[N, C, H, W]; params: conv1/conv2 weight float32[C, C, 3, 3] (no bias),
bn1/bn2 weight/bias/running_mean/running_var float32[C]; output: float32[N, C, H, W].
ATen ops (Core ATen capture): aten.convolution.default, aten.empty.memory_format,
aten.native_batch_norm.default, getitem, aten.relu.default, aten.add.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 2
C = 32
H = 16
W = 16


class Model(nn.Module):
    """conv3x3-bn-relu-conv3x3-bn, identity shortcut, relu; BN on running statistics."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(C, C, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(C)
        self.conv2 = nn.Conv2d(C, C, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(C)
        with torch.no_grad():  # non-trivial running statistics
            for bn in (self.bn1, self.bn2):
                bn.running_mean.uniform_(-0.5, 0.5)
                bn.running_var.uniform_(0.5, 2.0)
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.uniform_(-0.2, 0.2)
        self.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + x)


def get_inputs():
    return [torch.randn(N, C, H, W)]


def get_init_inputs():
    return []
