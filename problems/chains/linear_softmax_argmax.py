"""Classifier output: probabilities and predicted class, (softmax(fc(x)), argmax(fc(x))).

Inputs: x float32[batch, d_in]; params: fc weight float32[classes, d_in] + bias [classes];
outputs: float32[batch, classes], int64[batch].
ATen ops (Core ATen capture): aten.permute.default, aten.addmm.default,
aten._softmax.default, aten.argmax.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 256
d_in = 256
classes = 128


class Model(nn.Module):
    """Linear, then softmax and argmax of the logits."""

    def __init__(self, d_in: int, classes: int):
        super().__init__()
        self.fc = nn.Linear(d_in, classes)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.fc(x)
        return torch.softmax(logits, dim=1), logits.argmax(dim=1)


def get_inputs():
    x = torch.randn(batch, d_in)
    return [x]


def get_init_inputs():
    return [d_in, classes]
