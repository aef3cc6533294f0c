"""Valid problem that prints at import and in forward(); prints must not reach the protocol stream."""

import os

import torch
import torch.nn as nn

print("prints_to_stdout: hello from import")
os.write(1, b"prints_to_stdout: raw write to fd 1\n")

batch_size = 4
dim = 8


class Model(nn.Module):
    """ReLU that talks."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        print("prints_to_stdout: forward called with", tuple(x.shape))
        return torch.relu(x)


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
