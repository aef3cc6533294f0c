"""Embedding lookup: y = weight[tokens] (nn.Embedding).

Inputs: tokens int64[batch, seq] in [0, vocab), param.embed.weight float32[vocab, dim];
output: float32[batch, seq, dim].
ATen ops (Core ATen capture): aten.embedding.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 16
seq = 64
vocab = 1000
dim = 256


class Model(nn.Module):
    """nn.Embedding."""

    def __init__(self, vocab: int, dim: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.embed(tokens)


def get_inputs():
    tokens = torch.randint(0, vocab, (batch, seq))
    return [tokens]


def get_init_inputs():
    return [vocab, dim]
