"""The GPU's matmul peak for roofline fractions (issue 6): torch.mm of a large square
problem per dtype, timed with CUDA events.

Served by the GPU runner as ``gpu_matmul_peak``; the C++ side caches the answer in
``<cache>/triton/gpu_peaks.json`` per device name next to the copy bandwidth
(src/platforms/triton/triton_platform.cpp) and uses the figure of the problem's dtype
as the compute peak of the roofline.

Method: for each dtype, two 8192 x 8192 operands (uniform in [-1, 1), so no value is
special), three warm-up calls, then ``repetitions`` calls each between its own pair of
CUDA events, L2 flushed before each (gpu_timing.Clock); FLOP/s = 2 M N K / median
time (2 FLOP per multiply-add, the usual GEMM convention). "tf32" is float32 with
``torch.backends.cuda.matmul.allow_tf32`` on; "float32" has it off (PyTorch's
default, and the precision the triton_matmul template uses for float32 operands).
The H200 datasheet gives 989 TFLOP/s dense for float16/bfloat16 (tensor cores), 495
for TF32 and 67 for float32; the measured figure is what cuBLAS reaches.
"""

from __future__ import annotations

from typing import Any, Sequence

import torch

from .gpu_timing import Clock
from .protocol import ProtocolError, get_param

PEAK_SIZE = 8192
PEAK_DTYPES = ("float16", "bfloat16", "float32", "tf32")
WARMUP_CALLS = 3
REPETITIONS = 10

_TORCH_DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
                 "tf32": torch.float32}


def matmul_flops(m: int, n: int, k: int) -> float:
    """FLOPs of one [m, k] @ [k, n] product: 2 m n k (a multiply and an add per term)."""
    return 2.0 * m * n * k


def median(samples: Sequence[float]) -> float:
    """The middle sample (the mean of the two middle ones for an even count).

    Raises:
        ValueError: no samples.
    """
    if not samples:
        raise ValueError("median of no samples")
    ordered = sorted(samples)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])


def tflops(flops: float, microseconds: float) -> float:
    """1e12 FLOP/s of ``flops`` done in ``microseconds`` (0 when the time is not positive)."""
    return flops / (microseconds * 1e-6) / 1e12 if microseconds > 0 else 0.0


def parse_dtypes(raw: Any, method: str) -> list[str]:
    """The dtype list of a request: names from PEAK_DTYPES, no repeats.

    Raises:
        ProtocolError: not a list of known names.
    """
    if not isinstance(raw, list) or not raw or not all(isinstance(d, str) for d in raw):
        raise ProtocolError(f"{method}: 'dtypes' must be a non-empty list of names from {list(PEAK_DTYPES)}")
    unknown = [d for d in raw if d not in PEAK_DTYPES]
    if unknown or len(set(raw)) != len(raw):
        raise ProtocolError(f"{method}: 'dtypes' {raw!r}: unknown or repeated names (known: {list(PEAK_DTYPES)})")
    return list(raw)


def _time_mm(clock: Clock, device: torch.device, dtype_name: str, size: int, repetitions: int) -> list[float]:
    dtype = _TORCH_DTYPES[dtype_name]
    a = torch.rand(size, size, device=device, dtype=torch.float32).mul_(2).sub_(1).to(dtype)
    b = torch.rand(size, size, device=device, dtype=torch.float32).mul_(2).sub_(1).to(dtype)
    out = torch.empty(size, size, device=device, dtype=dtype)
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = dtype_name == "tf32"
    try:
        for _ in range(WARMUP_CALLS):
            torch.mm(a, b, out=out)
        clock.synchronize()
        return clock.time_calls(lambda: torch.mm(a, b, out=out), repetitions)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
        del a, b, out


def matmul_peak(params: dict[str, Any]) -> dict[str, Any]:
    """The ``gpu_matmul_peak`` method.

    Params: size (default 8192; M = N = K), dtypes (default all of PEAK_DTYPES),
    repetitions (default 10).
    Returns: {"size", "tflops": {dtype: 1e12 FLOP/s}, "median_us": {dtype: µs},
    "samples_us": {dtype: [...]}, "method"}.
    Raises:
        ProtocolError: no CUDA GPU, or bad params.
    """
    method = "gpu_matmul_peak"
    if not torch.cuda.is_available():
        raise ProtocolError(f"{method}: no CUDA GPU is visible (the matmul peak is not measured under "
                            "TRITON_INTERPRET=1)")
    size = get_param(params, method, "size", int, PEAK_SIZE)
    repetitions = get_param(params, method, "repetitions", int, REPETITIONS)
    if size < 256 or repetitions < 1:
        raise ProtocolError(f"{method}: size must be >= 256 and repetitions >= 1 (got {size}, {repetitions})")
    dtypes = parse_dtypes(get_param(params, method, "dtypes", list, list(PEAK_DTYPES)), method)
    device = torch.device("cuda", torch.cuda.current_device())
    clock = Clock(device)
    result: dict[str, Any] = {"size": size, "tflops": {}, "median_us": {}, "samples_us": {},
                              "method": f"torch.mm {size}^3, median of {repetitions} after {WARMUP_CALLS} "
                                        "warm-up calls, CUDA events, L2 flushed"}
    flops = matmul_flops(size, size, size)
    for name in dtypes:
        samples = _time_mm(clock, device, name, size, repetitions)
        result["samples_us"][name] = samples
        result["median_us"][name] = median(samples)
        result["tflops"][name] = tflops(flops, result["median_us"][name])
    torch.cuda.empty_cache()
    return result
