"""Complex intermediate: torch.fft.fft's complex64 result, float32 in and out.

No kernel dtype covers complex64, so `optimize` ends with
"unsupported_dtype: complex64 (node ..., aten....)", exit 1, the reference as the answer.
"""

import torch
import torch.nn as nn

batch_size = 4
dim = 16


class Model(nn.Module):
    """Real part of the FFT over the last dim."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.fft.fft(x).real


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
