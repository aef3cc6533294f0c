"""Bidirectional GRU, batch first, returning the final hidden states: _, h_n = gru(x).

Inputs: x float32[B, T, IN]; params: per direction weight_ih float32[3 HID, IN],
weight_hh float32[3 HID, HID], bias_ih / bias_hh float32[3 HID]; zero initial state;
output: h_n float32[2, B, HID] (forward direction's last step, backward direction's first).
ATen ops (Core ATen capture with oneDNN off, nn.GRU unrolled per time step):
aten.full.default, aten.permute.default, aten.slice.Tensor, aten.squeeze.dim,
aten.clone.default, aten._unsafe_view.default, aten.mm.default, aten.add.Tensor,
aten.split_with_sizes.default, getitem, aten.addmm.default, aten.add_.Tensor,
aten.sigmoid_.default, aten.mul_.Tensor, aten.tanh_.default, aten.sub.Tensor,
aten.cat.default, aten.view.default, aten.transpose_.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

B = 4
T = 16
IN = 32
HID = 48


class Model(nn.Module):
    """nn.GRU(IN, HID, batch_first=True, bidirectional=True); returns h_n."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(IN, HID, batch_first=True, bidirectional=True)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _, h_n = self.gru(x)
        return h_n


def get_inputs():
    return [torch.randn(B, T, IN)]


def get_init_inputs():
    return []
