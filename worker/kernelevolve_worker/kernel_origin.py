"""Kernel origin: every GPU kernel a candidate's launcher runs must come from the
candidate (issue 21, docs/fitness.md "Kernel origin on GPU targets").

A Triton candidate is a Python module, so nothing stops its launcher from calling
``torch.softmax`` or ``torch.matmul`` and passing every output check with PyTorch's
own kernels; a CUDA candidate could dlopen cuBLAS. The runner therefore profiles one
call of a correct candidate under ``torch.profiler`` (CUDA activity) and compares the
device events it recorded with the candidate's own kernel names:

- own kernels: the ``@triton.jit`` functions of the module (``triton_kernel_names``;
  Triton names the compiled kernel after the Python function), or the ``__global__``
  functions of the ``.cu`` source (``cuda_kernel_names``; extern "C" names appear as
  they are, C++ names demangled by the profiler, ``void name<...>(args)``, or still
  mangled, ``_Z<len><name>...``);
- allowed without coming from the candidate (``ALLOWED_PATTERNS``): memory set
  (``Memset (Device)``: cudaMemset, torch.zeros / zero_ on some paths), PyTorch's fill
  kernel (``FillFunctor``: torch.zeros, torch.full, fill_, zero_), device-to-device
  copies (``Memcpy DtoD``, PyTorch's copy kernel ``direct_copy_kernel`` / ``copy_kernel``:
  ``.contiguous()``, ``.clone()``, ``copy_`` of a view, a dtype cast). Allocation itself
  (``torch.empty``) and views launch nothing. A fill or a copy cannot compute a result
  from the inputs beyond moving or casting them; the one problem family it can pass is a
  pure copy / permutation / cast, which a PyTorch copy then solves (documented);
- a name that looks like a library's (``LIBRARY_MARKERS``: ``at::``, ``cunn_``, ``xmma``,
  ``nvjet``, ``cutlass``, ``sm90_...``) is never the candidate's, whatever its own
  kernels are called (a ``@triton.jit`` named after a cuBLAS kernel claims nothing);
- everything else is foreign: PyTorch compute kernels (``cunn_SoftMaxForward``,
  ``elementwise_kernel<... GeluCUDAKernelImpl ...>``, reductions), cuBLAS / cuBLASLt
  (``sm90_xmma_gemm_...``, ``nvjet_...``, ``cutlass...``, ``ampere_sgemm...``),
  cuDNN, and host transfers (``Memcpy DtoH`` / ``HtoD``: work done on the host).

The name matching (``foreign_kernels``) is a pure function over recorded name lists,
unit-tested without a GPU (tests/python/test_kernel_origin.py). Under
TRITON_INTERPRET=1 there are no device events; the check is skipped with a note.

Limits: the check sees the profiled call only. A launcher that detects the profiler
and behaves differently would pass; candidates whose source mentions the profiler
(``SUSPICIOUS_SOURCE``) are rejected outright for that reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

# Device events that may come from PyTorch rather than the candidate (see module doc).
ALLOWED_PATTERNS: tuple[tuple[str, str], ...] = (
    ("memset", r"^Memset \("),
    ("fill", r"FillFunctor"),
    ("device copy", r"^Memcpy DtoD"),
    ("device copy", r"direct_copy_kernel"),
    ("device copy", r"(^|[^A-Za-z_])copy_kernel"),
)

# A candidate whose source names the profiler could behave differently when profiled.
SUSPICIOUS_SOURCE = re.compile(r"profiler|kineto|_profiler_enabled|cupti", re.IGNORECASE)


@dataclass
class OriginVerdict:
    """What one profiled call launched.

    Attributes:
        foreign: kernel names neither the candidate's nor allowed, in first-seen order
            with their launch counts, e.g. [("cunn_SoftMaxForward<...>", 1)].
        own: names matched to the candidate's kernels.
        allowed: names allowed by ALLOWED_PATTERNS, with the rule that allowed them.
    """
    foreign: list[tuple[str, int]] = field(default_factory=list)
    own: list[str] = field(default_factory=list)
    allowed: list[tuple[str, str]] = field(default_factory=list)

    def reason(self, limit: int = 3) -> str:
        """The rejection message naming the foreign kernels ("" when none)."""
        if not self.foreign:
            return ""
        names = [f"{shorten(n)} (x{c})" if c > 1 else shorten(n) for n, c in self.foreign[:limit]]
        more = f" and {len(self.foreign) - limit} more" if len(self.foreign) > limit else ""
        return ("the launcher ran GPU kernels that do not come from the candidate: " + ", ".join(names) + more +
                " (a PyTorch compute op, cuBLAS or cuDNN does the work; only the candidate's own kernels, "
                "allocation, fills and device copies are allowed)")


def shorten(name: str, limit: int = 160) -> str:
    """A kernel name cut to ``limit`` characters (demangled template names run long)."""
    name = " ".join(name.split())
    return name if len(name) <= limit else name[:limit - 3] + "..."


def base_name(kernel: str) -> str:
    """The bare function name of a profiler kernel name.

    "void relu_kernel<4>(float const*, float*, long)" -> "relu_kernel";
    "kecu::softmax_row(float const*, ...)" -> "softmax_row"; "_softmax" -> "_softmax".
    Mangled names ("_Z4reluPKfPfl") are returned unchanged (see ``matches_own``).
    """
    s = kernel.strip()
    paren = s.find("(")
    if paren >= 0:
        s = s[:paren]
    depth, out = 0, []
    for ch in s:  # drop template arguments, which may hold spaces and "::"
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    s = "".join(out).strip()
    s = s.split()[-1] if s.split() else s  # drop a return type ("void")
    return s.split("::")[-1]


# Names that are PyTorch's or a vendor library's whatever the candidate calls its own
# kernels: a candidate cannot claim cuBLAS's "nvjet_hsh_..." or "sm90_xmma_gemm_..." by
# naming a @triton.jit function or a __global__ after it.
LIBRARY_MARKERS = re.compile(r"(^|[^A-Za-z0-9_])(at|c10)::|\(anonymous namespace\)|cunn_|cudnn|cublas|xmma|nvjet|cutlass|"
                             r"splitKreduce|^sm\d+_|^(ampere|volta|turing|hopper|maxwell|blackwell)_|"
                             r"^Memcpy|^Memset", re.IGNORECASE)


def matches_own(kernel: str, own: Iterable[str], exact: bool = False) -> bool:
    """True when profiler name ``kernel`` is one of the candidate's kernels ``own``.

    Names carrying LIBRARY_MARKERS never match. ``exact`` (Triton): the profiler name
    must equal the function name, as Triton names its kernels. Otherwise (CUDA C++) the
    demangled base name or the mangled ``<length><name>`` must match.
    """
    own_set = set(own)
    if LIBRARY_MARKERS.search(kernel):
        return False
    if exact:
        return kernel in own_set
    if base_name(kernel) in own_set:
        return True
    if kernel.startswith("_Z"):  # Itanium mangling: the name appears as <length><name>
        return any(f"{len(n)}{n}" in kernel for n in own_set)
    return False


def allowed_rule(kernel: str) -> str:
    """The ALLOWED_PATTERNS rule that admits ``kernel``, or ""."""
    for rule, pattern in ALLOWED_PATTERNS:
        if re.search(pattern, kernel):
            return rule
    return ""


def foreign_kernels(launched: Iterable[str], own: Iterable[str], exact: bool = False) -> OriginVerdict:
    """Sorts the device events of one call (profiler names, one per launch, any order
    of streams) into the candidate's own kernels, allowed ones and foreign ones.

    Args:
        launched: kernel / memcpy / memset event names as torch.profiler records them.
        own: the candidate's kernel names (triton_kernel_names / cuda_kernel_names).
        exact: Triton candidates (see matches_own).
    Returns:
        An OriginVerdict; ``foreign`` empty means the call passes.
    """
    own_names = list(own)
    verdict = OriginVerdict()
    counts: dict[str, int] = {}
    for name in launched:
        if matches_own(name, own_names, exact):
            if name not in verdict.own:
                verdict.own.append(name)
            continue
        rule = allowed_rule(name)
        if rule:
            if (name, rule) not in verdict.allowed:
                verdict.allowed.append((name, rule))
            continue
        counts[name] = counts.get(name, 0) + 1
    verdict.foreign = list(counts.items())
    return verdict


def triton_kernel_names(module: Any) -> list[str]:
    """Names of the ``@triton.jit`` functions a candidate module defines or imports,
    unwrapping ``@triton.autotune`` / ``@triton.heuristics`` (their ``.fn`` chain)."""
    names: list[str] = []
    for value in vars(module).values():
        obj, depth = value, 0
        while obj is not None and depth < 8:
            if type(obj).__name__ == "JITFunction" and hasattr(obj, "fn"):
                name = getattr(obj.fn, "__name__", "")
                if name and name not in names:
                    names.append(name)
                break
            obj, depth = getattr(obj, "fn", None), depth + 1
    return names


_GLOBAL = re.compile(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?(?:static\s+)?void\s+"
                     r"(?:__launch_bounds__\s*\([^)]*\)\s*)?([A-Za-z_]\w*)")


def cuda_kernel_names(source: str) -> list[str]:
    """Names of the ``__global__`` functions of a CUDA C++ source (comments ignored)."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", " ", source, flags=re.DOTALL)
    names: list[str] = []
    for m in _GLOBAL.finditer(text):
        if m.group(1) not in names:
            names.append(m.group(1))
    return names


def profile_launches(call: Callable[[], Any], synchronize: Callable[[], None]) -> list[str]:
    """Runs ``call`` once under torch.profiler with CUDA activity and returns the names
    of the device events it caused (kernels, memcpy, memset), one per launch, on every
    stream (``synchronize`` waits for the whole device before the profile closes)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        call()
        synchronize()
    names: list[str] = []
    for ev in prof.events():
        if getattr(ev, "device_type", None) == torch.autograd.DeviceType.CUDA:
            names.append(ev.name)
    return names
