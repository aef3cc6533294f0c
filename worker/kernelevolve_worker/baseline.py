"""Eager baseline timing: per-call latency of ``model(*inputs)``.

Each call allocates its output as eager PyTorch does (the drop-in cost). Warm-up
runs for ``warmup_seconds`` (and at least two calls); then every call is timed on
its own with time.perf_counter_ns until both ``min_time_seconds`` of timed calls and
``min_repetitions`` are reached (Google Benchmark's min-time rule, docs/user_guide.md
"Runtime and Reporting"). From then on timing stops as soon as the 95% confidence
interval of the median has a half-width of at most 2% of the median (issue 4), or
when ``max_time_seconds`` of wall time were spent timing, or at ``max_repetitions``
calls. The interval is the one the C++ side computes, reimplemented here:
src/eval/timing_stats.cpp, ``Summarize`` (order statistics, Conover, "Practical
Nonparametric Statistics", 3rd ed., sec. 3.2) and ``MedianPreciseEnough``.

With ``flush_cache`` a buffer of twice the last-level cache is written before every
timed call (untimed), as the CPU harness does with ``--flush-cache``, so eager
PyTorch and candidates are both timed with cold caches.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from .protocol import ProtocolError, get_param

MIN_WARMUP_CALLS = 2
TARGET_RELATIVE_HALF_WIDTH = 0.02  # eval::kTargetRelativeHalfWidth
_Z95 = 1.959963984540054           # two-sided 95% standard-normal quantile
SYSFS_CACHE_DIR = "/sys/devices/system/cpu/cpu0/cache"
FALLBACK_LLC_BYTES = 32 << 20      # platforms/cpu/cache_flush.h kFallbackLastLevelCacheBytes


@dataclass(frozen=True)
class BaselineConfig:
    """Timing budget. Seconds are wall-clock; repetitions count timed calls."""

    warmup_seconds: float = 0.1
    min_time_seconds: float = 0.5
    min_repetitions: int = 10
    max_repetitions: int = 10000
    max_time_seconds: float = 2.0
    flush_cache: bool = False

    @staticmethod
    def from_params(params: dict[str, Any], method: str) -> "BaselineConfig":
        """Reads the fields from a request's params (absent fields keep defaults).

        Raises:
            ProtocolError: wrong types, negative times, or repetitions < 1.
        """
        default = BaselineConfig()
        config = BaselineConfig(
            warmup_seconds=get_param(params, method, "warmup_seconds", float, default.warmup_seconds),
            min_time_seconds=get_param(params, method, "min_time_seconds", float, default.min_time_seconds),
            min_repetitions=get_param(params, method, "min_repetitions", int, default.min_repetitions),
            max_repetitions=get_param(params, method, "max_repetitions", int, default.max_repetitions),
            max_time_seconds=get_param(params, method, "max_time_seconds", float, default.max_time_seconds),
            flush_cache=get_param(params, method, "flush_cache", bool, default.flush_cache),
        )
        if config.warmup_seconds < 0 or config.min_time_seconds < 0 or config.max_time_seconds < 0:
            raise ProtocolError(f"{method}: warmup_seconds, min_time_seconds and max_time_seconds must be >= 0")
        if config.min_repetitions < 1 or config.max_repetitions < 1:
            raise ProtocolError(f"{method}: min_repetitions and max_repetitions must be >= 1")
        return config


def median_interval(samples: Sequence[float]) -> tuple[float, float, float]:
    """(median, ci_low, ci_high) exactly as eval::Summarize computes them.

    Median: linear interpolation at position (n - 1) / 2. Interval: sorted x(1..n),
    r = floor(n/2 - 1.96 * sqrt(n) / 2); [x(r), x(n + 1 - r)] when n >= 6 and r >= 1,
    else [min, max]. Raises ValueError on an empty sequence.
    """
    s = sorted(samples)
    n = len(s)
    if n == 0:
        raise ValueError("median_interval: no samples")
    position = (n - 1) * 0.5
    below = math.floor(position)
    above = min(below + 1, n - 1)
    median = s[below] + (position - below) * (s[above] - s[below])
    low_rank = math.floor(n / 2.0 - _Z95 * math.sqrt(n) / 2.0)
    if n < 6 or low_rank < 1:
        return median, s[0], s[-1]
    return median, s[low_rank - 1], s[n - low_rank]


def precise_enough(samples: Sequence[float], relative_half_width: float = TARGET_RELATIVE_HALF_WIDTH) -> bool:
    """eval::MedianPreciseEnough: n >= 6 and (ci_high - ci_low) / 2 <= rel * median."""
    if len(samples) < 6:
        return False
    median, low, high = median_interval(samples)
    return median > 0 and (high - low) / 2.0 <= relative_half_width * median


def _parse_cache_size(text: str) -> int | None:
    """platforms/cpu/cache_flush.cpp ParseCacheSizeText: "32768K" -> 33554432."""
    text = text.strip()
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    scale = units.get(text[-1:], 1)
    digits = text[:-1] if text[-1:] in units else text
    return int(digits) * scale if digits.isdigit() else None


def last_level_cache_bytes(cache_dir: str = SYSFS_CACHE_DIR) -> int:
    """Largest size among the highest-level data/unified caches under sysfs; 32 MiB when none."""
    best_level, best = -1, FALLBACK_LLC_BYTES
    try:
        entries = sorted(e for e in os.listdir(cache_dir) if e.startswith("index"))
    except OSError:
        return FALLBACK_LLC_BYTES
    for entry in entries:
        try:
            with open(os.path.join(cache_dir, entry, "type")) as f:
                if f.read().strip() == "Instruction":
                    continue
            with open(os.path.join(cache_dir, entry, "level")) as f:
                level = int(f.read().strip())
            with open(os.path.join(cache_dir, entry, "size")) as f:
                size = _parse_cache_size(f.read())
        except (OSError, ValueError):
            continue
        if size and (level > best_level or (level == best_level and size > best)):
            best_level, best = level, size
    return best


def time_model(model: torch.nn.Module, inputs: list[torch.Tensor], config: BaselineConfig) -> list[float]:
    """Times ``model(*inputs)`` under no_grad with the current torch thread count.

    Args:
        model: the reference, eval mode.
        inputs: forward() arguments (seed 0).
        config: warm-up, repetition and time budget, cache flushing.
    Returns:
        Per-call latencies in microseconds, in call order; at least one sample and at
        most ``config.max_repetitions``. Whether they converged is
        ``precise_enough(samples)`` (the C++ side recomputes it).
    Raises:
        Exception: whatever forward() raises (it already ran once during loading).
    """
    flush = torch.empty(2 * last_level_cache_bytes(), dtype=torch.uint8) if config.flush_cache else None
    with torch.no_grad():
        warmup_end = time.perf_counter() + config.warmup_seconds
        calls = 0
        while calls < MIN_WARMUP_CALLS or time.perf_counter() < warmup_end:
            model(*inputs)
            calls += 1
        samples: list[float] = []
        timed_ns = 0
        min_time_ns = int(config.min_time_seconds * 1e9)
        loop_end = time.perf_counter() + config.max_time_seconds
        next_check = config.min_repetitions
        while len(samples) < config.max_repetitions:
            if flush is not None:
                flush.fill_(len(samples) & 0xFF)
            start = time.perf_counter_ns()
            model(*inputs)
            elapsed = time.perf_counter_ns() - start
            samples.append(elapsed / 1000.0)
            timed_ns += elapsed
            if len(samples) < config.min_repetitions or timed_ns < min_time_ns:
                continue
            if time.perf_counter() >= loop_end:
                break
            # The sort behind the interval costs O(n log n): test at n, 1.1n, 1.21n, ...
            if len(samples) >= next_check:
                if precise_enough(samples):
                    break
                next_check = len(samples) + max(1, len(samples) // 10)
    return samples
