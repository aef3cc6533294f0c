"""Loading a Triton candidate: a Python module with @triton.jit kernels and one
launcher, ``kernelevolve_entry(inputs, outputs)`` (docs/gpu.md).

``inputs`` is the list of ABI input tensors (forward() arguments, then parameters,
manifest order) on the device, contiguous; ``outputs`` the list of preallocated
output tensors the launcher must fill. Its return value is ignored.
"""

from __future__ import annotations

import gc
import importlib.util
import itertools
import sys
import types
from pathlib import Path
from typing import Any, Callable

ENTRY_NAME = "kernelevolve_entry"
_counter = itertools.count()


class CandidateLoadError(Exception):
    """The candidate file cannot be imported or has no launcher.

    Attributes:
        status: "compile_error" (syntax error, import failure) or "rejected_by_check"
            (no callable ``kernelevolve_entry``).
    """

    def __init__(self, status: str, message: str, traceback_text: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.traceback_text = traceback_text


def load_candidate(path: str) -> tuple[types.ModuleType, Callable[..., Any]]:
    """Imports the candidate at ``path`` under a fresh module name.

    Returns:
        (module, launcher).
    Raises:
        CandidateLoadError: see its ``status``.
    """
    import traceback

    file = Path(path)
    if not file.is_file():
        raise CandidateLoadError("compile_error", f"candidate file {path} does not exist")
    name = f"kernelevolve_candidate_{next(_counter)}"
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise CandidateLoadError("compile_error", f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # triton.jit reads the source through the module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(name, None)
        raise CandidateLoadError("compile_error", f"syntax error line {exc.lineno}: {exc.msg}",
                                 traceback.format_exc()) from exc
    except (Exception, SystemExit) as exc:
        sys.modules.pop(name, None)
        raise CandidateLoadError("compile_error", f"import failed: {type(exc).__name__}: {exc}",
                                 traceback.format_exc()) from exc
    entry = getattr(module, ENTRY_NAME, None)
    if not callable(entry):
        sys.modules.pop(name, None)
        raise CandidateLoadError("rejected_by_check",
                                 f"the module defines no callable '{ENTRY_NAME}(inputs, outputs)'")
    return module, entry


def forget_candidate(module: types.ModuleType | None) -> None:
    """Drops a loaded candidate module from sys.modules and collects it.

    A module's functions and its dict reference each other, so what the module keeps
    (a CUDA-graph entry's captured graphs with their private memory pools, up to
    16 GiB: src/operators/codegen/triton/cuda_graph_entry.h; any tensor a candidate
    caches) would be freed only by a cyclic collection, which the runner may not reach
    before the next candidate allocates: gc.collect() frees it now."""
    if module is not None:
        sys.modules.pop(module.__name__, None)
        gc.collect()


def classify_exception(exc: BaseException) -> tuple[str, bool]:
    """Maps an exception raised by a launcher to (status name, sticky CUDA error).

    Triton compilation errors are "compile_error"; torch's out-of-memory is
    "out_of_memory"; a CUDA error (illegal address, launch failure, ...) is
    "runtime_error" and sticky: the process's CUDA context is unusable afterwards.
    """
    text = f"{type(exc).__name__}: {exc}"
    module = type(exc).__module__ or ""
    if "triton" in module and ("Compilation" in type(exc).__name__ or "compiler" in module):
        return "compile_error", False
    if isinstance(exc, getattr(__import__("torch"), "OutOfMemoryError", ())):
        return "out_of_memory", False
    sticky_markers = ("CUDA error", "illegal memory access", "an illegal instruction",
                      "unspecified launch failure", "misaligned address", "device-side assert",
                      "AcceleratorError", "cudaErrorLaunch")
    if any(marker in text for marker in sticky_markers):
        return "runtime_error", True
    return "runtime_error", False
