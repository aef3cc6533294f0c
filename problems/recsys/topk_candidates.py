"""Top-k retrieval: the k best-scoring candidates of each query, sorted, values and
indices. Scores are distinct (a random permutation per row), so the indices are unique.

Inputs: scores float32[queries, candidates]; outputs: float32[queries, k],
int64[queries, k].
ATen ops (Core ATen capture): aten.topk.default.
"""

import torch
import torch.nn as nn

queries = 256
candidates = 4096
k = 50
# The "zeros" edge set would make every score tie; the order torch.topk gives tied
# elements is unspecified (docs.pytorch.org/docs/stable/generated/torch.topk.html), so
# no kernel could match its indices there. The other sets keep the scores distinct.
EDGE_CASES = ["negative", "large", "tiny"]


class Model(nn.Module):
    """torch.topk(scores, k, dim=-1, largest=True, sorted=True)."""

    def forward(self, scores: torch.Tensor):
        values, indices = torch.topk(scores, k, dim=-1, largest=True, sorted=True)
        return values, indices


def get_inputs():
    return [torch.argsort(torch.rand(queries, candidates), dim=-1).to(torch.float32) / candidates]


def get_init_inputs():
    return []
