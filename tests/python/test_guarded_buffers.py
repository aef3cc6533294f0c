"""Guarded buffers of the GPU runner (worker/kernelevolve_worker/guarded_buffers.py).

On the CPU everywhere, and on the GPU too when one is visible. The runner-level cases
(a Triton candidate reading or writing one element past its buffers) are in
test_gpu_runner.py.
"""

from __future__ import annotations

import math

import pytest
import torch

import conftest  # noqa: F401  (puts worker/ on sys.path)
from kernelevolve_worker import guarded_buffers as gb
from kernelevolve_worker.guarded_buffers import (guard_message, guard_regions, guarded_clone, guarded_empty,
                                                 poison_pattern, tail_bytes)

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
FLOATS = [torch.float32, torch.float64, torch.float16, torch.bfloat16]
OTHERS = [torch.int64, torch.int32, torch.int16, torch.uint8, torch.bool]


def _guard_elements(t: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The head and tail guards seen as elements of t's dtype (on the CPU)."""
    head, tail = guard_regions(t)
    return head.cpu().view(t.dtype), tail.cpu().view(t.dtype)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", FLOATS)
def test_float_guards_hold_nan(device: str, dtype: torch.dtype) -> None:
    t = guarded_empty([3, 5], dtype, device)
    head, tail = _guard_elements(t)
    assert head.numel() * t.element_size() >= gb.HEAD_BYTES
    assert tail.numel() * t.element_size() >= gb.MIN_TAIL_BYTES
    assert torch.isnan(head.float()).all() and torch.isnan(tail.float()).all()
    # The element right after the data and the one right before it, as a kernel reads them.
    flat = torch.empty(0, dtype=dtype, device=device).set_(t.untyped_storage())
    assert math.isnan(float(flat[t.storage_offset() + t.numel()]))
    assert math.isnan(float(flat[t.storage_offset() - 1]))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", OTHERS)
def test_integer_and_bool_guards_hold_0x5a_bytes(device: str, dtype: torch.dtype) -> None:
    t = guarded_empty([7], dtype, device)
    head, tail = guard_regions(t)
    assert bool((head == 0x5A).all()) and bool((tail == 0x5A).all())
    assert poison_pattern(dtype, device).cpu().tolist() == [0x5A] * t.element_size()


@pytest.mark.parametrize("device", DEVICES)
def test_an_index_read_past_the_end_is_huge(device: str) -> None:
    # The value a kernel gets for index[n]: sends any address computed from it far away.
    index = guarded_clone(torch.arange(10, device=device))
    _, tail = _guard_elements(index)
    assert int(tail[0]) == 0x5A5A5A5A5A5A5A5A
    offsets = guarded_clone(torch.arange(10, dtype=torch.int32, device=device))
    _, tail32 = _guard_elements(offsets)
    assert int(tail32[0]) == 0x5A5A5A5A


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", [[4, 50], [3, 1, 7], [1000], [], [0, 16]])
def test_view_shape_contiguity_alignment(device: str, shape: list[int]) -> None:
    t = guarded_empty(shape, torch.float32, device)
    assert list(t.shape) == shape and t.dtype == torch.float32 and t.device.type == device
    assert t.is_contiguous()
    assert t.data_ptr() % gb.ALIGN_BYTES == 0
    head, tail = guard_regions(t)
    assert gb.HEAD_BYTES <= head.numel() < gb.HEAD_BYTES + gb.ALIGN_BYTES
    assert tail.numel() >= tail_bytes(shape, torch.float32)
    # The data sits between the guards with no gap: the tail starts at its last byte + 1.
    assert head.numel() == t.storage_offset() * 4
    assert head.numel() + t.numel() * 4 + tail.numel() == t.untyped_storage().nbytes()
    t.fill_(1.0)  # writing the data leaves the guards alone
    assert guard_message(t, "output.0") == ""


@pytest.mark.parametrize("device", DEVICES)
def test_clone_copies_values_dense_from_any_strides(device: str) -> None:
    src = torch.arange(24, dtype=torch.float32, device=device).reshape(4, 6).t()  # not contiguous
    copy = guarded_clone(src)
    assert copy.is_contiguous() and copy.shape == src.shape and torch.equal(copy, src)
    ints = torch.tensor([[1, 2], [3, 4]], dtype=torch.int64, device=device)
    assert torch.equal(guarded_clone(ints), ints)
    flags = torch.tensor([True, False, True], device=device)
    assert torch.equal(guarded_clone(flags), flags)


def test_tail_size_rule() -> None:
    kib, mib = 1 << 10, 1 << 20
    assert tail_bytes([10], torch.float32) == 64 * kib             # small: the minimum
    assert tail_bytes([16, 1 << 20], torch.float32) == 4 * mib     # one 4 MiB row (< 1/8 of 64 MiB)
    assert tail_bytes([2, 1 << 20], torch.float32) == 1 * mib      # a row is half: capped at 1/8
    assert tail_bytes([1 << 26], torch.float32) == 4 * mib         # 1-D: 1/64 of 256 MiB
    assert tail_bytes([1 << 20, 64], torch.float32) == 4 * mib     # many small rows: 1/64
    assert tail_bytes([3, 5], torch.float16) % gb.ALIGN_BYTES == 0
    # Never anywhere near a second copy: at most 1/8 of the tensor above the minimum.
    for shape in ([2, 1 << 24], [1 << 12, 1 << 12], [1 << 28]):
        nbytes = math.prod(shape) * 4
        assert tail_bytes(shape, torch.float32) <= nbytes // 8


@pytest.mark.parametrize("device", DEVICES)
def test_write_one_element_past_the_end_is_reported(device: str) -> None:
    t = guarded_empty([2, 50], torch.float32, device)
    assert guard_message(t, "output.0") == ""
    flat = torch.empty(0, dtype=torch.float32, device=device).set_(t.untyped_storage())
    flat[t.storage_offset() + t.numel()] = 0.0  # y[n] = 0
    assert guard_message(t, "output.0") == "wrote outside output.0: 4 byte(s) past its end changed"


@pytest.mark.parametrize("device", DEVICES)
def test_write_before_the_start_is_reported(device: str) -> None:
    t = guarded_empty([8], torch.int64, device)
    flat = torch.empty(0, dtype=torch.int64, device=device).set_(t.untyped_storage())
    flat[t.storage_offset() - 1] = 7  # y[-1]
    assert guard_message(t, "output.1") == "wrote outside output.1: 8 byte(s) before its start changed"


@pytest.mark.parametrize("device", DEVICES)
def test_write_at_the_far_end_of_the_tail_is_reported(device: str) -> None:
    t = guarded_empty([4, 4], torch.float16, device)
    _, tail = guard_regions(t)
    tail[-1] = 0  # the last byte of the allocation: one float16 element changed
    assert guard_message(t, "input.0") == "wrote outside input.0: 2 byte(s) past its end changed"


@pytest.mark.parametrize("device", DEVICES)
def test_changes_are_counted_across_check_chunks(device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gb, "CHECK_CHUNK_BYTES", 1000)  # the 64 KiB tail in 66 chunks
    t = guarded_empty([16], torch.float32, device)
    _, tail = guard_regions(t)
    tail[[0, 1, 999, 1000, 40_000, tail.numel() - 1]] = 0x11  # in 5 float32 elements
    assert guard_message(t, "output.0") == "wrote outside output.0: 20 byte(s) past its end changed"


def test_a_plain_tensor_is_refused() -> None:
    with pytest.raises(ValueError, match="not a guarded tensor"):
        guard_message(torch.zeros(4), "output.0")
    with pytest.raises(ValueError, match="not a guarded tensor"):
        guard_message(guarded_empty([4, 4], torch.float32, "cpu").t(), "output.0")
