"""Integer feature hashing on int64: a multiply-xorshift mix then modulo the table size,
the "hashing trick" of sparse features (Weinberger et al., ICML 2009). Constants: the
64-bit finalizer multipliers of MurmurHash3 (fmix64, Austin Appleby), truncated to fit
int64 (the top bit cleared); arithmetic wraps modulo 2^64 as in two's complement.

Inputs: ids int64[n] (any value, negative included); output: int64[n] in [0, num_buckets).
ATen ops (Core ATen capture): mul, bitwise_xor, bitwise_and, __rshift__ (rshift), remainder.
"""

import torch
import torch.nn as nn

n = 1 << 20
num_buckets = 1000003
mult1 = 0x7F51AFD7ED558CCD & 0x7FFFFFFFFFFFFFFF
mult2 = 0x44CEB9FE1A85EC53
mask33 = (1 << 31) - 1


class Model(nn.Module):
    """h = ((x ^ (x >> 33) & mask) * m1; h ^= (h >> 33) & mask; h *= m2; h % num_buckets."""

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = ids ^ ((ids >> 33) & mask33)
        h = h * mult1
        h = h ^ ((h >> 33) & mask33)
        h = h * mult2
        return torch.remainder(h, num_buckets)


def get_inputs():
    return [torch.randint(-(1 << 62), 1 << 62, (n,), dtype=torch.int64)]


def get_init_inputs():
    return []
