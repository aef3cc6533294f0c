"""Interleaved GPU timing: CUDA events, L2 flushed before every timed call.

The method follows Triton's do_bench (python/triton/testing.py): before each timed
call a buffer of twice the device's L2 (``torch.cuda.get_device_properties(d)
.L2_cache_size``) is zeroed, so no call finds its data in L2 from the one before;
each call is bracketed by its own pair of CUDA events on the current stream; the
events are read only after one synchronize at the end. Several functions (candidate,
eager PyTorch, torch.compile) are timed in interleaved rounds, the order rotating
each round, so clock and thermal drift hit them alike.

Without a GPU (TRITON_INTERPRET=1 tests) the same loop runs with time.perf_counter
on the CPU; such figures say nothing about GPU speed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

import torch


@dataclass(frozen=True)
class TimingConfig:
    """Budget per timed function: warm-up seconds, then rounds of calls until every
    function has ``min_time_seconds`` of timed calls and ``min_repetitions`` calls,
    at most ``max_repetitions``."""

    warmup_seconds: float = 0.05
    min_time_seconds: float = 0.25
    min_repetitions: int = 10
    max_repetitions: int = 2000
    rounds: int = 10


class Clock:
    """Times calls on one device: CUDA events on a GPU, perf_counter on the CPU."""

    def __init__(self, device: torch.device) -> None:
        self.device = device
        self.cuda = device.type == "cuda"
        self.flush_buffer: torch.Tensor | None = None
        if self.cuda:
            l2 = torch.cuda.get_device_properties(device).L2_cache_size
            # Twice the L2: after zeroing it no earlier line can still be resident.
            self.flush_buffer = torch.empty(max(2 * int(l2), 1 << 20), dtype=torch.int8, device=device)

    def flush_bytes(self) -> int:
        """Size of the L2 flush buffer in bytes (0 on the CPU)."""
        return 0 if self.flush_buffer is None else self.flush_buffer.numel()

    def synchronize(self) -> None:
        """Waits for all work on the device (device-wide)."""
        if self.cuda:
            torch.cuda.synchronize(self.device)

    def time_calls(self, fn: Callable[[], object], count: int) -> list[float]:
        """Runs ``fn`` ``count`` times, each after an L2 flush; returns µs per call."""
        if not self.cuda:
            samples = []
            for _ in range(count):
                start = time.perf_counter_ns()
                fn()
                samples.append((time.perf_counter_ns() - start) / 1000.0)
            return samples
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(count)]
        for i in range(count):
            self.flush_buffer.zero_()
            starts[i].record()
            fn()
            ends[i].record()
        torch.cuda.synchronize(self.device)
        return [s.elapsed_time(e) * 1000.0 for s, e in zip(starts, ends)]

    def estimate_us(self, fn: Callable[[], object], warmup_seconds: float) -> float:
        """Warms ``fn`` up (at least 2 calls, ``warmup_seconds`` of wall time) and returns
        the median µs of a few flushed calls."""
        end = time.perf_counter() + warmup_seconds
        calls = 0
        while calls < 2 or time.perf_counter() < end:
            fn()
            # Each call finishes before the clock is read: launches return at once, so
            # unsynchronized the loop would queue up to 1000 calls in the warm-up time
            # (1000 x 20 ms = 20 s of GPU work for one GPU-sized matmul).
            self.synchronize()
            calls += 1
            if calls >= 1000:
                break
        samples = sorted(self.time_calls(fn, 5))
        return max(samples[len(samples) // 2], 0.5)


def time_interleaved(clock: Clock, fns: dict[str, Callable[[], object]],
                     config: TimingConfig) -> dict[str, list[float]]:
    """Times every function of ``fns`` in ``config.rounds`` interleaved rounds.

    Returns:
        name -> per-call latencies in µs (same count for every function).
    Raises:
        whatever a function raises (the caller maps it to a status).
    """
    estimates = {name: clock.estimate_us(fn, config.warmup_seconds) for name, fn in fns.items()}
    slowest = max(estimates.values())
    total = max(config.min_repetitions, int(config.min_time_seconds * 1e6 / slowest) + 1)
    total = min(total, config.max_repetitions)
    rounds = max(1, min(config.rounds, total))
    per_round = max(1, -(-total // rounds))
    samples: dict[str, list[float]] = {name: [] for name in fns}
    names = list(fns)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in order:
            samples[name].extend(clock.time_calls(fns[name], per_round))
    return samples
