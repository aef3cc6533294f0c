"""Cross entropy over classes, mean over the batch: y = mean_b(logsumexp(x[b]) - x[b, t[b]]).

Inputs: logits float32[batch_size, num_classes], targets int64[batch_size] in [0, num_classes);
output: float32[] (a scalar).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 4096
num_classes = 1000


class Model(nn.Module):
    """Cross-entropy loss."""

    def __init__(self):
        super().__init__()

    def forward(self, logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits, targets)


def get_inputs():
    logits = torch.randn(batch_size, num_classes)
    targets = torch.randint(0, num_classes, (batch_size,))
    return [logits, targets]


def get_init_inputs():
    return []
