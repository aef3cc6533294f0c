"""Bad problem: an output whose size depends on the input values, without OUTPUT_BOUNDS,
that only an edge-case set reveals: on the seeds every element of randn passes x > -100,
on the "large" set (inputs x 1e4) about half do not."""

import torch
import torch.nn as nn

EDGE_CASES = ["large"]


class Model(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x[x > -100.0]


def get_inputs():
    return [torch.randn(1000)]


def get_init_inputs():
    return []
