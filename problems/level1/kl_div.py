"""KL divergence, batchmean: y = sum(t * (log t - log p)) / batch_size, with p and t rows of
probabilities (softmax of Gaussian noise).

Inputs: predictions, targets float32[batch_size, dim] (rows sum to 1); output: float32[].
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 128
dim = 8192

# Both inputs are probabilities: edge-case sets outside (0, 1] are skipped (zeros would
# make log(predictions) -inf and the reference NaN).
INPUT_DOMAIN = {"predictions": (1e-38, 1.0), "targets": (0.0, 1.0)}


class Model(nn.Module):
    """KL divergence of predictions from targets."""

    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.kl_div(torch.log(predictions), targets, reduction="batchmean")


def get_inputs():
    predictions = torch.randn(batch_size, dim).softmax(dim=-1)
    targets = torch.randn(batch_size, dim).softmax(dim=-1)
    return [predictions, targets]


def get_init_inputs():
    return []
