"""torch's process-wide settings a problem file may change, put back before the next one.

A problem worker, and a GPU runner, load many problems in one process (``bench``). A
problem file that calls ``torch.set_default_dtype(torch.float64)`` or sets
``torch.backends.cuda.matmul.allow_tf32 = True`` at import would otherwise change how
every later problem draws its inputs and runs its reference (found by a fresh-clone
review, 2026-12-06: the next problem's ``torch.randn`` inputs came out float64).
``restore_defaults`` puts back what this process had when this module was imported
(the worker's start), before each problem file is imported.
"""

from __future__ import annotations

from typing import Any, Callable

import torch


def _read_tf32(getter: Callable[[], Any]) -> Any:
    try:
        return bool(getter())
    except RuntimeError:  # torch 2.9+: the legacy getter refuses once the new API was used
        return None


_DEFAULTS = {
    "dtype": torch.get_default_dtype(),
    "matmul_precision": torch.get_float32_matmul_precision(),
    "matmul_tf32": _read_tf32(lambda: torch.backends.cuda.matmul.allow_tf32),
    "cudnn_tf32": _read_tf32(lambda: torch.backends.cudnn.allow_tf32),
    "cudnn_benchmark": torch.backends.cudnn.benchmark,
    "cudnn_deterministic": torch.backends.cudnn.deterministic,
    "deterministic": torch.are_deterministic_algorithms_enabled(),
}


def restore_defaults() -> None:
    """Sets the default dtype, the float32 matmul precision, the TF32 flags of matmuls and
    cuDNN convolutions, cuDNN's benchmark and deterministic flags and
    ``torch.use_deterministic_algorithms`` back to their values at worker start."""
    torch.set_default_dtype(_DEFAULTS["dtype"])
    torch.set_float32_matmul_precision(_DEFAULTS["matmul_precision"])
    if _DEFAULTS["matmul_tf32"] is not None:
        torch.backends.cuda.matmul.allow_tf32 = _DEFAULTS["matmul_tf32"]
    if _DEFAULTS["cudnn_tf32"] is not None:
        torch.backends.cudnn.allow_tf32 = _DEFAULTS["cudnn_tf32"]
    torch.backends.cudnn.benchmark = _DEFAULTS["cudnn_benchmark"]
    torch.backends.cudnn.deterministic = _DEFAULTS["cudnn_deterministic"]
    torch.use_deterministic_algorithms(_DEFAULTS["deterministic"])
