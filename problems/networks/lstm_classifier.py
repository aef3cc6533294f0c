"""Two-layer LSTM then a Linear on the last step: y = fc(lstm(x)[0][:, -1]).

Inputs: x float32[B, T, IN]; params: a 2-layer nn.LSTM(IN, HID, batch_first=True) and
fc float32[CLASSES, HID] with bias; zero initial state; output: float32[B, CLASSES].
ATen ops (Core ATen capture with oneDNN off, nn.LSTM unrolled per time step):
aten.full.default, aten.permute.default, aten.slice.Tensor, aten.squeeze.dim,
aten.clone.default, aten._unsafe_view.default, aten.mm.default, aten.add.Tensor,
aten.addmm.default, aten.add_.Tensor, aten.split_with_sizes.default, getitem,
aten.sigmoid_.default, aten.tanh_.default, aten.mul.Tensor, aten.tanh.default,
aten.cat.default, aten.view.default, aten.select.int.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 8
T = 16
IN = 32
HID = 64
CLASSES = 10


class Model(nn.Module):
    """nn.LSTM (2 layers, batch_first) -> last time step -> nn.Linear."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(IN, HID, num_layers=2, batch_first=True)
        self.fc = nn.Linear(HID, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)
        return self.fc(y[:, -1])


def get_inputs():
    return [torch.randn(B, T, IN)]


def get_init_inputs():
    return []
