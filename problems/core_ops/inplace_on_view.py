"""In-place updates through views: y = 2 x; y[:, :16] += 1 (through a slice); v = y[0]
(a view taken before the next update); y *= 3 in place; returns y and v + 0.

Inputs: x float32[rows, cols]; outputs: float32[rows, cols] and float32[cols].
ATen ops (Core ATen capture, functionalized: graph_capture.trace_core_aten): aten.mul.Tensor,
aten.slice.Tensor, aten.add.Tensor, aten.slice_scatter.default, aten.select.int.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

rows = 256
cols = 1024


class Model(nn.Module):
    """Scaled x with an in-place add on a column slice and an in-place scale; row 0 as read before the scale."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = x * 2
        y[:, :16].add_(1)
        v = y[0]
        y.mul_(3)
        return y, v + 0


def get_inputs():
    x = torch.randn(rows, cols)
    return [x]


def get_init_inputs():
    return []
