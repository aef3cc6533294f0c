"""One GRUCell step: h1 = gru_cell(x, h0).

Inputs: x float32[B, IN], h0 float32[B, HID]; params: weight_ih float32[3 HID, IN],
weight_hh float32[3 HID, HID], bias_ih / bias_hh float32[3 HID]; output: h1 float32[B, HID].
ATen ops (Core ATen capture): aten.permute.default, aten.addmm.default,
aten.split_with_sizes.default, getitem, aten.add_.Tensor, aten.sigmoid_.default,
aten.mul_.Tensor, aten.add.Tensor, aten.tanh_.default, aten.sub.Tensor.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 64
IN = 128
HID = 256


class Model(nn.Module):
    """nn.GRUCell(IN, HID), one step."""

    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(IN, HID)

    def forward(self, x: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
        return self.cell(x, h0)


def get_inputs():
    return [torch.randn(B, IN), torch.randn(B, HID)]


def get_init_inputs():
    return []
