"""Two-layer LSTM, batch first, returning the top layer's output sequence: y, _ = lstm(x).

Inputs: x float32[B, T, IN]; params: per layer weight_ih float32[4 HID, IN or HID],
weight_hh float32[4 HID, HID], bias_ih / bias_hh float32[4 HID]; zero initial state;
output: float32[B, T, HID].
ATen ops (Core ATen capture with oneDNN off, nn.LSTM unrolled per time step):
aten.full.default, aten.permute.default, aten.slice.Tensor, aten.squeeze.dim,
aten.clone.default, aten._unsafe_view.default, aten.mm.default, aten.add.Tensor,
aten.addmm.default, aten.add_.Tensor, aten.split_with_sizes.default, getitem,
aten.sigmoid_.default, aten.tanh_.default, aten.mul.Tensor, aten.tanh.default,
aten.cat.default, aten.view.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 4
T = 16
IN = 32
HID = 64


class Model(nn.Module):
    """nn.LSTM(IN, HID, num_layers=2, batch_first=True)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(IN, HID, num_layers=2, batch_first=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y, _ = self.lstm(x)
        return y


def get_inputs():
    return [torch.randn(B, T, IN)]


def get_init_inputs():
    return []
