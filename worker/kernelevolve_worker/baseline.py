"""Eager baseline timing: per-call latency of ``model(*inputs)``.

Each call allocates its output as eager PyTorch does (the drop-in cost). Warm-up
runs for ``warmup_seconds`` (and at least two calls); then every call is timed on
its own with time.perf_counter_ns until both ``min_time_seconds`` of timed calls and
``min_repetitions`` are reached, or ``max_repetitions`` calls were made
(Google Benchmark's min-time rule, docs/user_guide.md "Runtime and Reporting").
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import torch

from .protocol import ProtocolError, get_param

MIN_WARMUP_CALLS = 2


@dataclass(frozen=True)
class BaselineConfig:
    """Timing budget. Seconds are wall-clock; repetitions count timed calls."""

    warmup_seconds: float = 0.1
    min_time_seconds: float = 0.5
    min_repetitions: int = 10
    max_repetitions: int = 10000

    @staticmethod
    def from_params(params: dict[str, Any], method: str) -> "BaselineConfig":
        """Reads the four fields from a request's params (absent fields keep defaults).

        Raises:
            ProtocolError: wrong types, negative times, or repetitions < 1.
        """
        default = BaselineConfig()
        config = BaselineConfig(
            warmup_seconds=get_param(params, method, "warmup_seconds", float, default.warmup_seconds),
            min_time_seconds=get_param(params, method, "min_time_seconds", float, default.min_time_seconds),
            min_repetitions=get_param(params, method, "min_repetitions", int, default.min_repetitions),
            max_repetitions=get_param(params, method, "max_repetitions", int, default.max_repetitions),
        )
        if config.warmup_seconds < 0 or config.min_time_seconds < 0:
            raise ProtocolError(f"{method}: warmup_seconds and min_time_seconds must be >= 0")
        if config.min_repetitions < 1 or config.max_repetitions < 1:
            raise ProtocolError(f"{method}: min_repetitions and max_repetitions must be >= 1")
        return config


def time_model(model: torch.nn.Module, inputs: list[torch.Tensor], config: BaselineConfig) -> list[float]:
    """Times ``model(*inputs)`` under no_grad with the current torch thread count.

    Args:
        model: the reference, eval mode.
        inputs: forward() arguments (seed 0).
        config: warm-up and repetition budget.
    Returns:
        Per-call latencies in microseconds, in call order; at least one sample and at
        most ``config.max_repetitions``.
    Raises:
        Exception: whatever forward() raises (it already ran once during loading).
    """
    with torch.no_grad():
        warmup_end = time.perf_counter() + config.warmup_seconds
        calls = 0
        while calls < MIN_WARMUP_CALLS or time.perf_counter() < warmup_end:
            model(*inputs)
            calls += 1
        samples: list[float] = []
        timed_ns = 0
        min_time_ns = int(config.min_time_seconds * 1e9)
        while len(samples) < config.max_repetitions:
            start = time.perf_counter_ns()
            model(*inputs)
            elapsed = time.perf_counter_ns() - start
            samples.append(elapsed / 1000.0)
            timed_ns += elapsed
            if len(samples) >= config.min_repetitions and timed_ns >= min_time_ns:
                break
    return samples
