"""One LSTMCell step: (h1, c1) = lstm_cell(x, (h0, c0)).

Inputs: x float32[B, IN], h0, c0 float32[B, HID]; params: weight_ih float32[4 HID, IN],
weight_hh float32[4 HID, HID], bias_ih / bias_hh float32[4 HID]; outputs: h1, c1 float32[B, HID].
ATen ops (Core ATen capture): aten.permute.default, aten.addmm.default, aten.add_.Tensor,
aten.split_with_sizes.default, getitem, aten.sigmoid_.default, aten.tanh_.default,
aten.mul.Tensor, aten.tanh.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 64
IN = 128
HID = 256


class Model(nn.Module):
    """nn.LSTMCell(IN, HID), one step; returns (h1, c1)."""

    def __init__(self):
        super().__init__()
        self.cell = nn.LSTMCell(IN, HID)

    def forward(self, x: torch.Tensor, h0: torch.Tensor, c0: torch.Tensor):
        h1, c1 = self.cell(x, (h0, c0))
        return h1, c1


def get_inputs():
    return [torch.randn(B, IN), torch.randn(B, HID), torch.randn(B, HID)]


def get_init_inputs():
    return []
