"""Three-layer MLP: y = fc3(relu(fc2(relu(fc1(x))))), x float32[B, IN]; fc1 [HID, IN], fc2 [HID, HID], fc3 [OUT, HID] weights with biases; output float32[B, OUT].

ATen ops (Core ATen capture): aten.permute.default, aten.addmm.default, aten.relu.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 64
IN = 256
HID = 512
OUT = 10


class Model(nn.Module):
    """Linear -> ReLU -> Linear -> ReLU -> Linear."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(IN, HID), nn.ReLU(),
            nn.Linear(HID, HID), nn.ReLU(),
            nn.Linear(HID, OUT),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


def get_inputs():
    return [torch.randn(B, IN)]


def get_init_inputs():
    return []
