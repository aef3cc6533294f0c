"""Memory check before any real tensor is allocated.

The problem is run once on the meta device (shapes and dtypes, no storage) to learn
the bytes of one input set: inputs + state_dict tensors + outputs. Loading keeps up
to ``len(seeds) + 2`` such sets alive (one per seed while fixtures are written, the
copy the reference runs on, and the seed-0 set kept for timing), so that product
must fit the memory budget.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

import torch

from .problem_loader import constants_hint, dtype_name, exception_line, module_constants
from .protocol import ProblemError

# Working copies beyond one set per seed (see module docstring).
EXTRA_SETS = 2


@dataclass(frozen=True)
class TensorSize:
    """Size of one ABI tensor: name ("input.0"), dtype name, shape, bytes."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    nbytes: int

    def describe(self) -> str:
        """"input.0 float32[64, 16384] 4.2 MB"."""
        dims = ", ".join(str(d) for d in self.shape)
        return f"{self.name} {self.dtype}[{dims}] {format_bytes(self.nbytes)}"


def format_bytes(nbytes: float) -> str:
    """Decimal units with one decimal: 4.0e10 -> "40.0 GB", 1536 -> "1.5 KB"."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(nbytes) < 1000 or unit == "TB":
            return f"{nbytes:.0f} B" if unit == "B" else f"{nbytes:.1f} {unit}"
        nbytes /= 1000
    return f"{nbytes:.1f} TB"


def _size(name: str, value: object) -> TensorSize:
    if isinstance(value, torch.Tensor):
        return TensorSize(name, dtype_name(value.dtype), tuple(value.shape),
                          value.numel() * value.element_size())
    if isinstance(value, bool):
        return TensorSize(name, "bool", (), 1)
    if isinstance(value, int):
        return TensorSize(name, "int64", (), 8)
    if isinstance(value, float):
        return TensorSize(name, "float32", (), 4)
    raise TypeError(f"{name} is a {type(value).__name__}, not a tensor or number")


def measure_on_meta(module: types.ModuleType) -> list[TensorSize]:
    """Sizes of inputs, state_dict tensors and outputs, computed on the meta device.

    Runs get_init_inputs(), Model(*init), get_inputs() and forward() under
    ``torch.device("meta")`` and no_grad.
    Raises:
        Exception: whatever the problem code raises on meta tensors (the caller
            treats that as "check skipped").
    """
    with torch.device("meta"), torch.no_grad():
        model = module.Model(*module.get_init_inputs())
        raw_inputs = list(module.get_inputs())
        result = model(*raw_inputs)
    sizes = [_size(f"input.{i}", v) for i, v in enumerate(raw_inputs)]
    sizes += [_size(f"param.{k}", v) for k, v in model.state_dict().items()]
    outputs = [result] if isinstance(result, torch.Tensor) else list(result)
    sizes += [_size(f"output.{i}", v) for i, v in enumerate(outputs)]
    return sizes


def _suggestion(module: types.ModuleType, scale: float) -> str:
    """"--set dim=4096": the largest int constant scaled by ``scale`` (< 1), rounded
    down to a power of two; "..." when the file has no int constant above 1."""
    ints = {k: v for k, v in module_constants(module).items() if isinstance(v, int) and v > 1}
    if not ints:
        return "--set NAME=... or edit get_inputs()"
    name = max(ints, key=lambda k: ints[k])
    target = max(1, int(ints[name] * scale))
    return f"--set {name}={1 << (target.bit_length() - 1)}"


def check_memory(module: types.ModuleType, path: str, num_seeds: int, budget_bytes: int | None) -> str:
    """Checks that loading the problem fits ``budget_bytes``.

    Args:
        module: the imported problem, overrides already applied.
        path: the file as the caller spelled it, for messages.
        num_seeds: number of fixture seeds.
        budget_bytes: memory budget in bytes; None skips the check.
    Returns:
        "ok", or "skipped: <reason>" when no budget was given or the meta-device pass
        failed (some problems cannot run on meta tensors).
    Raises:
        ProblemError: (inputs + params + outputs) * (num_seeds + 2) > budget_bytes; the
            one-line message lists the biggest tensors and suggests a --set.
    """
    if budget_bytes is None:
        return "skipped: no memory_budget_bytes given"
    try:
        sizes = measure_on_meta(module)
    except (Exception, SystemExit) as exc:  # user code on meta tensors: anything may fail
        return f"skipped: meta-device pass failed: {exception_line(exc)}"
    per_set = sum(s.nbytes for s in sizes)
    sets = num_seeds + EXTRA_SETS
    needed = per_set * sets
    if needed <= budget_bytes:
        return "ok"
    biggest = sorted(sizes, key=lambda s: s.nbytes, reverse=True)
    listed = ", ".join(s.describe() for s in biggest[:4])
    if len(biggest) > 4:
        listed += f", and {len(biggest) - 4} more"
    raise ProblemError(
        f"{path}: one input set needs {format_bytes(per_set)} ({listed}); loading keeps "
        f"{sets} sets ({num_seeds} seeds + {EXTRA_SETS} working copies) = {format_bytes(needed)}, "
        f"more than the memory budget of {format_bytes(budget_bytes)}; scale it down with --set, "
        f"e.g. {_suggestion(module, budget_bytes / needed)} ({constants_hint(module)})")
