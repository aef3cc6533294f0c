"""Small conv net: conv3x3-relu-maxpool2-conv3x3-relu-maxpool2-flatten-linear.

Inputs: x float32[N, 3, H, W]; params: conv1 float32[C1, 3, 3, 3], conv2 float32[C2, C1, 3, 3]
(with biases, padding 1), fc float32[CLASSES, C2 * H/4 * W/4] with bias; output: float32[N, CLASSES].
ATen ops (Core ATen capture): aten.convolution.default, aten.relu.default,
aten.max_pool2d_with_indices.default, getitem, aten.view.default, aten.permute.default,
aten.addmm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

N = 4
H = 32
W = 32
C1 = 16
C2 = 32
CLASSES = 10


class Model(nn.Module):
    """Two conv blocks and a linear classifier."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, C1, 3, padding=1)
        self.conv2 = nn.Conv2d(C1, C2, 3, padding=1)
        self.fc = nn.Linear(C2 * (H // 4) * (W // 4), CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


def get_inputs():
    return [torch.randn(N, 3, H, W)]


def get_init_inputs():
    return []
