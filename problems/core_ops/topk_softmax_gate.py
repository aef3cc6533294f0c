"""Mixture-of-experts gate: the top-2 of each token's expert logits, softmax over them.

Inputs: logits float32[tokens, experts]; outputs: float32[tokens, 2] gate weights,
int64[tokens, 2] expert ids.
ATen ops (Core ATen capture): aten.topk.default, aten._softmax.default.
"""

import torch
import torch.nn as nn

tokens = 2048
experts = 16
k = 2
# The "zeros" edge set ties every logit; torch.topk leaves the order of tied elements
# unspecified, so its ids there are no reference. The other sets keep logits distinct.
EDGE_CASES = ["negative", "large", "tiny"]


class Model(nn.Module):
    """values, ids = logits.topk(2); (softmax(values), ids)."""

    def forward(self, logits: torch.Tensor):
        values, ids = torch.topk(logits, k, dim=-1)
        return torch.softmax(values, dim=-1), ids


def get_inputs():
    return [torch.randn(tokens, experts)]


def get_init_inputs():
    return []
