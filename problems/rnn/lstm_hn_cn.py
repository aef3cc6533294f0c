"""LSTM (sequence first) from a given initial state, returning the final states stacked: torch.stack([h_n, c_n]).

Inputs: x float32[T, B, IN], h0, c0 float32[1, B, HID]; params: weight_ih
float32[4 HID, IN], weight_hh float32[4 HID, HID], bias_ih / bias_hh float32[4 HID];
output: float32[2, 1, B, HID].
ATen ops (Core ATen capture with oneDNN off, nn.LSTM unrolled per time step):
aten.slice.Tensor, aten.squeeze.dim, aten.view.default, aten.permute.default,
aten.addmm.default, aten.add_.Tensor, aten.split_with_sizes.default, getitem,
aten.sigmoid_.default, aten.tanh_.default, aten.mul.Tensor, aten.tanh.default,
aten.cat.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

T = 24
B = 8
IN = 32
HID = 64


class Model(nn.Module):
    """nn.LSTM(IN, HID) with (h0, c0); returns stack(h_n, c_n)."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(IN, HID)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor) -> torch.Tensor:
        _, (h_n, c_n) = self.lstm(x, (h0, c0))
        return torch.stack([h_n, c_n])


def get_inputs():
    return [torch.randn(T, B, IN), torch.randn(1, B, HID), torch.randn(1, B, HID)]


def get_init_inputs():
    return []
