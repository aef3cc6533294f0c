"""Selection of the positive-label rows' scores (masked_select): a data-dependent output
length, bounded (OUTPUT_BOUNDS, docs/abi.md).

Inputs: scores float32[n], labels int64[n] in {0, 1}; output: float32[count(labels == 1)]
(bound [n]).
ATen ops (Core ATen capture): eq, index (boolean mask).
"""

import torch
import torch.nn as nn

n = 1 << 18

OUTPUT_BOUNDS = {0: (n,)}


class Model(nn.Module):
    """scores[labels == 1]."""

    def forward(self, scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        return scores[labels == 1]


def get_inputs():
    return [torch.randn(n), torch.randint(0, 2, (n,), dtype=torch.int64)]


def get_init_inputs():
    return []
