"""Stable descending sort of candidate scores with ties (scores quantized to 1/64, so
equal scores are common): values and the original positions, ties kept in input order.

Inputs: scores float32[rows, candidates]; outputs: float32[rows, candidates] sorted,
int64[rows, candidates] positions.
ATen ops (Core ATen capture): aten.sort.stable.
"""

import torch
import torch.nn as nn

rows = 256
candidates = 1024


class Model(nn.Module):
    """torch.sort(scores, dim=-1, descending=True, stable=True)."""

    def forward(self, scores: torch.Tensor):
        values, positions = torch.sort(scores, dim=-1, descending=True, stable=True)
        return values, positions


def get_inputs():
    return [torch.round(torch.randn(rows, candidates) * 64.0) / 64.0]


def get_init_inputs():
    return []
