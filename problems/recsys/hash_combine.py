"""Feature cross by hashing two int64 id features into one bucket id: the boost-style
combine h = a ^ (b + golden + (a << 6) + (a >> 2)), then modulo (golden = 0x9E3779B9,
the 32-bit golden-ratio constant of Knuth's multiplicative hashing, TAOCP vol. 3).

Inputs: a int64[n], b int64[n] (non-negative ids < 2^40); output: int64[n] in [0, num_buckets).
ATen ops (Core ATen capture): add, bitwise_xor, __lshift__, __rshift__, remainder.
"""

import torch
import torch.nn as nn

n = 1 << 20
num_buckets = 500009
golden = 0x9E3779B9


class Model(nn.Module):
    """(a ^ (b + golden + (a << 6) + (a >> 2))) % num_buckets."""

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        h = a ^ (b + golden + (a << 6) + (a >> 2))
        return torch.remainder(h, num_buckets)


def get_inputs():
    return [torch.randint(0, 1 << 40, (n,), dtype=torch.int64), torch.randint(0, 1 << 40, (n,), dtype=torch.int64)]


def get_init_inputs():
    return []
