"""Candidate kinds the GPU runner serves, chosen by file name: a Python module
(``.py``, Triton: triton_candidate.py) or a shared object built by nvcc (``.so``,
CUDA C++: cuda_candidate.py). Both give a ``kernelevolve_entry(inputs, outputs)``
callable; the runner checks and times either the same way."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from . import cuda_candidate, kernel_origin, triton_candidate
from .triton_candidate import CandidateLoadError

__all__ = ["CandidateLoadError", "classify_exception", "forget_candidate", "load_candidate", "own_kernels"]


def load_candidate(path: str) -> tuple[Any, Callable[..., Any]]:
    """(handle, launcher) for the candidate at ``path``; raises CandidateLoadError."""
    if cuda_candidate.is_cuda_candidate(path):
        return cuda_candidate.load_candidate(path)
    return triton_candidate.load_candidate(path)


def forget_candidate(handle: Any) -> None:
    """Drops a Triton module from sys.modules; a shared object stays loaded (its
    static CUDA runtime is not unloaded safely while the process lives)."""
    if isinstance(handle, cuda_candidate.CudaCandidate):
        return
    triton_candidate.forget_candidate(handle)


def classify_exception(exc: BaseException) -> tuple[str, bool]:
    """(status name, sticky CUDA error) for an exception raised by a launcher: a CUDA
    candidate's return code by its meaning (cuda_candidate.EntryError), else the
    Triton rules (triton_candidate.classify_exception)."""
    if isinstance(exc, cuda_candidate.EntryError):
        return exc.status, exc.sticky
    return triton_candidate.classify_exception(exc)


def own_kernels(handle: Any, path: str) -> tuple[list[str], bool, str]:
    """The candidate's own kernel names for the kernel-origin check (kernel_origin.py):
    (names, exact, source). A Triton module's ``@triton.jit`` functions (exact names);
    a CUDA object's ``__global__`` functions read from the ``.cu`` source that the
    builder keeps beside the ``.so`` (platforms::CompileCached). ``source`` is the text
    the names came from ("" when a CUDA object has no source beside it: names empty)."""
    if isinstance(handle, cuda_candidate.CudaCandidate):
        source_path = Path(path).with_suffix(".cu")
        try:
            source = source_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return [], False, ""
        return kernel_origin.cuda_kernel_names(source), False, source
    try:
        source = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        source = ""
    return kernel_origin.triton_kernel_names(handle), True, source
