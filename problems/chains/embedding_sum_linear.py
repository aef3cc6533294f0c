"""Bag of embeddings and a projection: y = fc(embed(tokens).sum(dim=1)).

Inputs: tokens int64[batch, seq] in [0, vocab); params: embed.weight float32[vocab, dim],
fc weight float32[d_out, dim] + bias [d_out]; output: float32[batch, d_out].
ATen ops (Core ATen capture): aten.embedding.default, aten.sum.dim_IntList,
aten.permute.default, aten.addmm.default.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch = 64
seq = 32
vocab = 1000
dim = 128
d_out = 64


class Model(nn.Module):
    """Embedding, sum over the sequence, Linear."""

    def __init__(self, vocab: int, dim: int, d_out: int):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.fc = nn.Linear(dim, d_out)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.fc(self.embed(tokens).sum(dim=1))


def get_inputs():
    tokens = torch.randint(0, vocab, (batch, seq))
    return [tokens]


def get_init_inputs():
    return [vocab, dim, d_out]
