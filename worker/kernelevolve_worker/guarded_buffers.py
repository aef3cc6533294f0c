"""Guarded device buffers: the GPU runner's counterpart of the CPU harness's guard pages.

A guarded tensor is a dense, contiguous view into a larger uint8 allocation on the same
device, with a poisoned guard region before and after its data::

    | head guard (>= HEAD_BYTES) | data (numel * itemsize) | tail guard (>= tail_bytes()) |

- The data starts on an ALIGN_BYTES (256-byte) boundary (the head is HEAD_BYTES = 4096
  bytes plus at most 255 bytes of alignment slack, all of it poisoned), so vector loads
  and TMA descriptors see the alignment a plain ``torch.empty`` gives.
- The tail starts right after the last data byte (no slack): a write of even one
  element past the end changes it. Its size is ``tail_bytes(shape, dtype)``: at least
  MIN_TAIL_BYTES (64 KiB), at least one slice along the first dimension (a row of a
  2-D table, a matrix of a 3-D batch) up to 1/8 of the tensor, and at least 1/64 of the
  tensor. So a read of a row or more past the end of a table lands in the guard, and
  the extra memory is at most 1/8 of a tensor (1/64 for tensors of 64 rows or more),
  never a second copy: multi-GB inputs stay affordable on the device.
- Poison (the same as gpu_checks.fill_poison): NaN of the tensor's dtype for floating
  dtypes, bytes 0x5A for every other dtype (integers, bool, complex). A float read from
  a guard is NaN, which propagates to the output (``x + 0 * guard`` is NaN) and makes
  the candidate ``incorrect``; an int64 index or offset read from a guard is
  0x5A5A5A5A5A5A5A5A (about 6.5e18), which sends an address computed from it far
  outside any allocation: an illegal-address fault, a sticky CUDA error the runner
  reports as ``runtime_error`` and is restarted after (seen on the H200 with a Triton
  gather whose unmasked index load read the guard; where the gathered values fed only
  masked-off stores, Triton dropped those loads and nothing faulted). An int32 one is
  0x5A5A5A5A, about 1.5e9: scaled by the element size it is GBs away, usually unmapped.

``guard_message`` reads the guards back after a call: "" when every guard byte still
holds the poison, else a "wrote outside <name>: ..." message in the CPU harness's
wording (src/platforms/cpu/harness_guard.cpp). What the guards cannot see: a read or
write that jumps over a guard into other live memory (far past every buffer), a
read whose value the kernel discards (``tl.maximum(x, nan)`` may drop the NaN), and a
write that stores exactly the poison bytes.
"""

from __future__ import annotations

from typing import Sequence

import torch

from .gpu_checks import fill_poison

HEAD_BYTES = 4096                 # poisoned bytes before the data, at least
ALIGN_BYTES = 256                 # the data's address is a multiple of this
MIN_TAIL_BYTES = 64 << 10         # poisoned bytes after the data, at least
ROW_FRACTION_CAP = 8              # one first-dim slice counts up to 1/8 of the tensor
TAIL_FRACTION = 64                # and the tail is at least 1/64 of the tensor
CHECK_CHUNK_BYTES = 64 << 20      # guard bytes compared at once (bounds the temporaries)


def _round_up(n: int, multiple: int) -> int:
    return (n + multiple - 1) // multiple * multiple


def _itemsize(dtype: torch.dtype) -> int:
    return torch.empty((), dtype=dtype).element_size()


def tail_bytes(shape: Sequence[int], dtype: torch.dtype) -> int:
    """Bytes of poison after a guarded tensor of ``shape`` and ``dtype``.

    max(MIN_TAIL_BYTES, min(one slice along dim 0, nbytes / 8), nbytes / 64), rounded up
    to ALIGN_BYTES. One slice along dim 0 is nbytes / shape[0] for two or more
    dimensions (a table's row), else 0.
    """
    numel = 1
    for d in shape:
        numel *= int(d)
    nbytes = numel * _itemsize(dtype)
    row = nbytes // int(shape[0]) if len(shape) >= 2 and int(shape[0]) > 0 else 0
    return _round_up(max(MIN_TAIL_BYTES, min(row, nbytes // ROW_FRACTION_CAP), nbytes // TAIL_FRACTION),
                     ALIGN_BYTES)


def poison_pattern(dtype: torch.dtype, device: torch.device | str) -> torch.Tensor:
    """The poison of one element of ``dtype`` as uint8 [itemsize] on ``device``: the bytes
    of NaN for floating dtypes (as ``fill_(nan)`` writes it there), 0x5A otherwise."""
    one = torch.empty(1, dtype=dtype, device=device)
    fill_poison(one)
    return one.view(torch.uint8)


def guarded_empty(shape: Sequence[int], dtype: torch.dtype, device: torch.device | str) -> torch.Tensor:
    """An uninitialized contiguous tensor of ``shape`` and ``dtype`` on ``device``, with
    poisoned guards before and after it in the same allocation (module docstring).

    The data is left as ``torch.empty`` leaves it (callers that need poisoned data call
    gpu_checks.fill_poison). The returned tensor keeps the whole allocation alive; its
    storage_offset is the head's size in elements.

    Raises:
        RuntimeError: from torch, when the device is out of memory.
    """
    shape = [int(d) for d in shape]
    itemsize = _itemsize(dtype)
    numel = 1
    for d in shape:
        numel *= d
    nbytes = numel * itemsize
    tail = tail_bytes(shape, dtype)
    raw = torch.empty(HEAD_BYTES + ALIGN_BYTES + nbytes + tail, dtype=torch.uint8, device=device)
    base = raw.data_ptr()
    start = _round_up(base + HEAD_BYTES, ALIGN_BYTES) - base  # head size, a multiple of 64 >= itemsize
    end = start + nbytes
    for guard in (raw[:start], raw[end:]):
        fill_poison(guard.view(dtype))
    return raw[start:end].view(dtype).view(shape)


def guarded_clone(t: torch.Tensor) -> torch.Tensor:
    """A guarded (guarded_empty) contiguous copy of ``t``: same shape, dtype, device and
    values, row-major whatever ``t``'s strides."""
    out = guarded_empty(t.shape, t.dtype, t.device)
    out.copy_(t)
    return out


def guard_regions(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(head, tail): the uint8 guard regions around guarded tensor ``t``'s data, views of
    its allocation (the head ends at ``t``'s first byte, the tail starts after its last).

    Raises:
        ValueError: ``t`` is not a guarded tensor (not contiguous, or fewer than
            HEAD_BYTES before it in its storage).
    """
    itemsize = t.element_size()
    start = t.storage_offset() * itemsize
    if not t.is_contiguous() or start < HEAD_BYTES:
        raise ValueError(f"not a guarded tensor (contiguous: {t.is_contiguous()}, {start} bytes before it in its "
                         f"storage, {HEAD_BYTES} expected): allocate it with guarded_empty or guarded_clone")
    raw = torch.empty(0, dtype=torch.uint8, device=t.device).set_(t.untyped_storage())
    end = start + t.numel() * itemsize
    return raw[:start], raw[end:]


def _changed_bytes(region: torch.Tensor, pattern: torch.Tensor) -> int:
    """Bytes of the elements of a uint8 region (a whole number of elements of
    ``pattern.numel()`` bytes) that differ from the poison ``pattern`` in any byte: whole
    elements are counted, so a 0.0 stored over a float32 NaN (00 00 00 00 over
    00 00 C0 7F) counts 4 bytes. Compared in chunks of CHECK_CHUNK_BYTES so the
    temporaries stay small."""
    width = pattern.numel()
    chunk = _round_up(CHECK_CHUNK_BYTES, width)
    return width * sum(int((region[begin:begin + chunk].view(-1, width) != pattern).any(dim=1).sum())
                       for begin in range(0, region.numel(), chunk))


def guard_message(t: torch.Tensor, name: str) -> str:
    """"" when both guards of guarded tensor ``t`` still hold the poison, else the CPU
    harness's wording: "wrote outside output.0: 4 byte(s) before its start changed" or
    "wrote outside output.0: 4 byte(s) past its end changed" (before-start first; the
    bytes of the changed guard elements of t's dtype).
    Synchronize the device before calling (the comparison runs on the current stream).

    Raises:
        ValueError: ``t`` is not a guarded tensor.
    """
    head, tail = guard_regions(t)
    pattern = poison_pattern(t.dtype, t.device)
    changed = _changed_bytes(head, pattern)
    if changed:
        return f"wrote outside {name}: {changed} byte(s) before its start changed"
    changed = _changed_bytes(tail, pattern)
    if changed:
        return f"wrote outside {name}: {changed} byte(s) past its end changed"
    return ""


def first_guard_message(tensors: Sequence[torch.Tensor], names: Sequence[str]) -> str:
    """The first non-empty guard_message over (tensor, name) pairs, in order; "" when
    every guard is intact."""
    for t, name in zip(tensors, names):
        message = guard_message(t, name)
        if message:
            return message
    return ""
