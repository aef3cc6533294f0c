"""Output comparison for GPU candidates, the same rule as the CPU checker.

Mirrors src/eval/tolerance.cpp (CompareTensors, DefaultTolerance): an element passes
when ``|out - ref| <= atol + rtol * |ref|``; NaN must sit where the reference has
NaN, and an infinity must equal the reference's; integer and bool outputs must be
equal. Defaults: float32 atol = rtol = 1e-4, float64 1e-7, float16 atol 1e-5 rtol 1e-3, bfloat16 atol 1e-5 rtol 1.6e-2,
others exact; a manifest's ``tolerance`` {dtype: {"atol", "rtol"}} overrides them.
The result is an OutputCheck document (src/eval/result_json.h, OutputCheckToJson).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch


# src/eval/tolerance.cpp, DefaultTolerance.
DEFAULT_TOLERANCE: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-4),
    "float64": (1e-7, 1e-7),
    "float16": (1e-5, 1e-3),  # torch.testing.assert_close's defaults (src/eval/tolerance.h)
    "bfloat16": (1e-5, 1.6e-2),
}
TINY_REFERENCE = 1e-12  # src/eval/tolerance.cpp, kTinyReference
# Elements compared at once: each float64 temporary is 128 MiB, not the size of the whole
# output (a KernelBench-default-sized output of 1.6e9 float32 elements needed 12 GiB per
# temporary, and went out of GPU memory with its input sets on the device).
CHUNK_ELEMENTS = 1 << 24
# The failure kinds a check's "note" names, the first found in this order.
NOTE_ORDER = ("NaN where reference is finite", "finite value where reference is NaN", "infinity mismatch")


class EdgeSet(NamedTuple):
    """One edge-case set as the GPU runner checks it (edge_cases.py)."""

    name: str                     # "zeros", "negative", "large", "tiny"
    description: str              # how the set is built, one line
    inputs: list[torch.Tensor]    # ABI order, on the runner's device
    outputs: list[torch.Tensor]   # float64 references rounded to the output dtypes
    # Eager's own error per output name (edge_cases.reference_error); absent = 0.
    reference_error: dict[str, float]
    # Per output name, eager's per-element error scale (eager_error.element_error_scale:
    # float32, the output's shape, on the runner's device); absent = no allowance.
    allowance: dict[str, torch.Tensor] = {}


def mismatch_message(check: dict[str, Any], where: str, elements: int) -> str:
    """The incorrect verdict's message for a failed ``check`` (compare()), worded as the
    CPU harness words it (platforms/cpu/harness.cpp MismatchMessage): "output.0 differs
    from the reference on seed 1: 3 of 4096 elements outside atol=0.0001 rtol=0.0001
    (max abs error 0.02, first at flat index 17)", then "; <note>" when there is one.
    ``where`` names the set ("seed 1", "edge case 'large' (float inputs scaled by 10000)")."""
    text = f"{check['output']} differs from the reference on {where}: "
    counted = check["mismatches"] > 0 and not check["note"].startswith("shape/dtype mismatch")
    if counted:
        text += (f"{check['mismatches']} of {elements} elements outside atol={check['atol']:g} "
                 f"rtol={check['rtol']:g} (max abs error {_number(check['max_abs_error'])}, "
                 f"first at flat index {check['first_mismatch']})")
    if check["note"]:
        text += ("; " if counted else "") + check["note"]
    return text


def _number(value: Any) -> str:
    """A json_double() value as %g text ("NaN", "Infinity" as they are)."""
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def allowance_note(reference_error: dict[str, float], scale: torch.Tensor | None, multiple: float,
                   atol: float, output: str) -> str:
    """What a mismatch message adds, as the CPU harness words it (harness.cpp
    EdgeAllowanceNote): with a per-element allowance (``scale``, eager_error.py, and the
    problem's EAGER_ERROR_MULTIPLE ``multiple`` > 0) "; the tolerance at each element adds
    8 x eager PyTorch's own rounding error there (at most 40 on this set)"; without one,
    when eager's own error (``reference_error`` by output name) exceeds ``atol`` (the
    dtype's), a hint that eager misses the tolerance there too; else ""."""
    if scale is not None and multiple > 0 and scale.numel() > 0:
        return (f"; the tolerance at each element adds {multiple:g} x eager PyTorch's own rounding error there "
                f"(at most {multiple * float(scale.max()):g} on this set)")
    error = float(reference_error.get(output, 0.0))
    if error <= atol:
        return ""
    fix = ("leave the set out with EDGE_CASES, or remove EAGER_ERROR_MULTIPLE = 0, in the problem file" if multiple <= 0
           else "leave the set out with EDGE_CASES in the problem file")
    return (f"; eager PyTorch's own float32 result is up to {error:g} off the float64 reference on this set, "
            f"outside this tolerance too: {fix} (docs/fitness.md)")


def json_double(value: float) -> Any:
    """A float as eval::DoubleToJson writes it: finite numbers, else "NaN"/"Infinity"."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return value


def tolerance_for(dtype: torch.dtype, overrides: dict[str, dict[str, float]]) -> tuple[float, float]:
    """(atol, rtol) for ``dtype``: the manifest's override, else the default (0, 0)."""
    name = str(dtype).removeprefix("torch.")
    if name in overrides:
        return float(overrides[name]["atol"]), float(overrides[name]["rtol"])
    return DEFAULT_TOLERANCE.get(name, (0.0, 0.0))


def compare(actual: torch.Tensor, expected: torch.Tensor, seed_index: int, name: str,
            overrides: dict[str, dict[str, float]], scale: torch.Tensor | None = None,
            multiple: float = 0.0) -> dict[str, Any]:
    """Compares one output with its reference (any device; the reference is moved).

    With ``scale`` (eager's per-element error scale, eager_error.py: the reference's
    shape, any float dtype) and ``multiple`` > 0, element i's tolerance adds
    multiple * scale[i] (src/eval/tolerance.h, the same rule).

    Returns:
        {"seed_index", "output", "passed", "max_abs_error", "max_rel_error",
         "mismatches", "first_mismatch", "atol", "rtol", "note"}.
    """
    atol, rtol = tolerance_for(expected.dtype, overrides)
    if scale is not None and (multiple <= 0 or not expected.is_floating_point() or scale.numel() != expected.numel()):
        scale = None
    check: dict[str, Any] = {"seed_index": seed_index, "output": name, "passed": False,
                             "max_abs_error": 0.0, "max_rel_error": 0.0, "mismatches": 0,
                             "first_mismatch": -1, "atol": atol, "rtol": rtol, "note": ""}
    if actual.dtype != expected.dtype or tuple(actual.shape) != tuple(expected.shape):
        check["note"] = (f"shape/dtype mismatch: got {tuple(actual.shape)} {actual.dtype}, "
                         f"expected {tuple(expected.shape)} {expected.dtype}")
        check["mismatches"] = max(1, expected.numel())
        check["first_mismatch"] = 0
        return check
    a = actual.reshape(-1)
    e = expected.reshape(-1)
    mismatches, notes = 0, set()
    for begin in range(0, a.numel(), CHUNK_ELEMENTS):
        extra = None if scale is None else \
            scale.reshape(-1)[begin:begin + CHUNK_ELEMENTS].to(a.device).double().mul_(multiple)
        bad = _mismatches(a[begin:begin + CHUNK_ELEMENTS], e[begin:begin + CHUNK_ELEMENTS].to(a.device), atol, rtol,
                          check, notes, extra)
        count = int(bad.sum())
        if count and not mismatches:
            check["first_mismatch"] = begin + int(torch.nonzero(bad)[0, 0])
        mismatches += count
    for note in NOTE_ORDER:  # the first kind found, in this order
        if note in notes:
            check["note"] = note
            break
    check["mismatches"] = mismatches
    check["passed"] = mismatches == 0
    check["max_abs_error"] = json_double(check["max_abs_error"])
    check["max_rel_error"] = json_double(check["max_rel_error"])
    return check


def _mismatches(a: torch.Tensor, e: torch.Tensor, atol: float, rtol: float, check: dict[str, Any],
                notes: set[str], extra: torch.Tensor | None = None) -> torch.Tensor:
    """The bool mask of the elements of one chunk that fail (``extra``: per-element
    additions to atol, float64, the chunk's length); raises check's
    max_abs_error / max_rel_error to the chunk's and adds the kinds of failure found
    (NOTE_ORDER) to ``notes``."""
    if not e.is_floating_point():
        return a != e
    a64, e64 = a.double(), e.double()
    e_nan, a_nan = torch.isnan(e64), torch.isnan(a64)
    e_inf, a_inf = torch.isinf(e64), torch.isinf(a64)
    finite = ~(e_nan | a_nan | e_inf | a_inf)
    diff = torch.where(finite, (a64 - e64).abs(), torch.zeros_like(a64))
    abs_e = e64.abs()
    if diff.numel() > 0:
        check["max_abs_error"] = max(check["max_abs_error"], float(diff.max()))
        # Over finite pairs only (diff is 0 elsewhere, but 0 / NaN would be NaN).
        rel = torch.where(finite, diff / abs_e.clamp_min(TINY_REFERENCE), torch.zeros_like(diff))
        check["max_rel_error"] = max(check["max_rel_error"], float(rel.max()))
    bound = atol + rtol * abs_e if extra is None else atol + rtol * abs_e + extra
    finite_bad = finite & (diff > bound)
    nan_bad = e_nan != a_nan
    inf_bad = (e_inf | a_inf) & ~(e_nan | a_nan) & (a64 != e64)
    if bool((nan_bad & e_nan.logical_not()).any()):
        notes.add(NOTE_ORDER[0])
    elif bool(nan_bad.any()):
        notes.add(NOTE_ORDER[1])
    if bool(inf_bad.any()):
        notes.add(NOTE_ORDER[2])
    return finite_bad | nan_bad | inf_bad


def fill_poison(tensor: torch.Tensor) -> None:
    """Pre-fills an output so unwritten elements show up: NaN (float) or bytes 0x5A."""
    if tensor.is_floating_point():
        tensor.fill_(float("nan"))
    elif tensor.numel() > 0:
        tensor.reshape(-1).view(torch.uint8).fill_(0x5A)


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """True when two tensors of the same shape and dtype hold identical bytes."""
    if a.numel() == 0:
        return True
    return bool(torch.equal(a.contiguous().reshape(-1).view(torch.uint8),
                            b.contiguous().reshape(-1).view(torch.uint8)))
