"""Loading a KernelBench-format problem file: import, overrides, model, inputs, outputs.

A problem file defines ``class Model(nn.Module)``, ``get_inputs()`` and
``get_init_inputs()``; module-level int/float constants (``batch_size``, ``dim``)
size it and may be overridden (``--set NAME=VALUE``) before anything is called.

Every error caused by the file is raised as ProblemError with one line naming the
file (as the caller spelled its path) and the cause.
"""

from __future__ import annotations

import ast
import importlib.util
import itertools
import re
import sys
import traceback
import types
from pathlib import Path
from typing import Any

import torch

from .protocol import ProblemError, one_line
from .torch_state import restore_defaults

REQUIRED_NAMES = ("Model", "get_inputs", "get_init_inputs")

# dtypes the candidate ABI carries (src/core/dtype.h), by torch dtype.
SUPPORTED_DTYPES: dict[torch.dtype, str] = {
    torch.float32: "float32",
    torch.float64: "float64",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int8: "int8",
    torch.int16: "int16",
    torch.int32: "int32",
    torch.int64: "int64",
    torch.uint8: "uint8",
    torch.bool: "bool",
}

_module_counter = itertools.count()


def dtype_name(dtype: torch.dtype) -> str:
    """Torch-style dtype name without the "torch." prefix, e.g. "float32"."""
    return str(dtype).removeprefix("torch.")


def tensor_spec(name: str, role: str, tensor: torch.Tensor) -> dict[str, Any]:
    """ABI description of one tensor: {"name", "role", "shape": [int], "dtype": str}.

    ``role`` is "input", "parameter" or "output"; a 0-d tensor has shape [].
    """
    return {"name": name, "role": role, "shape": list(tensor.shape), "dtype": dtype_name(tensor.dtype)}


def exception_line(exc: BaseException) -> str:
    """"<Type>: <message>" on one line (just "<Type>" when the message is empty)."""
    text = one_line(str(exc), 500)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def import_problem(path: str) -> types.ModuleType:
    """Imports the problem file under a fresh, unique module name, after putting torch's
    process-wide settings back to the worker's start (torch_state.restore_defaults: an
    earlier problem file may have changed them).

    Args:
        path: the file, as the caller gave it (used verbatim in messages).
    Returns:
        The executed module (registered in sys.modules under its unique name).
    Raises:
        ProblemError: file missing, syntax error ("syntax error at line L: msg"),
            an exception while executing it, or one of Model / get_inputs /
            get_init_inputs missing.
    """
    file = Path(path)
    if not file.is_file():
        raise ProblemError(f"{path}: no such problem file")
    stem = re.sub(r"\W", "_", file.stem)
    module_name = f"kernelevolve_problem_{next(_module_counter)}_{stem}"
    spec = importlib.util.spec_from_file_location(module_name, str(file.resolve()))
    if spec is None or spec.loader is None:
        raise ProblemError(f"{path}: cannot be imported as a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    restore_defaults()
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        sys.modules.pop(module_name, None)
        raise ProblemError(f"{path}: syntax error at line {exc.lineno}: {exc.msg}",
                           traceback.format_exc()) from exc
    except (Exception, SystemExit) as exc:  # user code: anything may be raised
        sys.modules.pop(module_name, None)
        raise ProblemError(f"{path}: importing the file raised {exception_line(exc)}",
                           traceback.format_exc()) from exc
    for required in REQUIRED_NAMES:
        if not hasattr(module, required):
            sys.modules.pop(module_name, None)
            what = "class" if required == "Model" else "function"
            shown = required if required == "Model" else f"{required}()"
            raise ProblemError(f"{path}: no {shown} {what} (KernelBench format needs Model, "
                               "get_inputs, get_init_inputs)")
    return module


def forget_problem(module: types.ModuleType | None) -> None:
    """Drops a previously imported problem module from sys.modules (frees its globals)."""
    if module is not None:
        sys.modules.pop(module.__name__, None)


def module_constants(module: types.ModuleType) -> dict[str, int | float]:
    """The module-level int/float constants (bools and _private names excluded),
    in definition order, e.g. {"batch_size": 64, "dim": 16384}."""
    return {
        name: value
        for name, value in vars(module).items()
        if not name.startswith("_") and type(value) in (int, float)
    }


def constants_hint(module: types.ModuleType) -> str:
    """"module-level constants: batch_size=64, dim=16384" ("... none" without any)."""
    constants = module_constants(module)
    listed = ", ".join(f"{k}={v!r}" for k, v in constants.items()) or "none"
    return f"module-level constants: {listed}"


def parse_override_value(raw: Any) -> Any:
    """Parses a --set value: a Python literal via ast.literal_eval ("4" -> 4,
    "0.5" -> 0.5, "(1, 2)" -> (1, 2)); any other string stays a string.
    Non-string values (already typed by the caller) pass through unchanged."""
    if not isinstance(raw, str):
        return raw
    try:
        return ast.literal_eval(raw.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return raw


def apply_overrides(module: types.ModuleType, overrides: dict[str, Any], path: str) -> None:
    """Sets module-level names before any problem function is called.

    Args:
        module: the imported problem.
        overrides: NAME -> value string (see parse_override_value).
        path: the file as spelled by the caller, for messages.
    Raises:
        ProblemError: a name the module does not define, one naming a class,
            function or module (the message lists the int/float constants), or a
            value that is not a number for a numeric constant. An integral float
            for an int constant becomes an int ("1e6" -> 1000000).
    """
    for name, raw in overrides.items():
        if not hasattr(module, name):
            raise ProblemError(f"{path}: --set {name}={raw}: the file has no module-level name "
                               f"'{name}' ({constants_hint(module)})")
        current = getattr(module, name)
        if callable(current) or isinstance(current, types.ModuleType):
            raise ProblemError(f"{path}: --set {name}={raw}: '{name}' is a "
                               f"{type(current).__name__}, not a constant "
                               f"({constants_hint(module)})")
        value = parse_override_value(raw)
        if _is_number(current) and not _is_number(value):
            raise ProblemError(f"{path}: --set {name}={raw}: '{name}' is a number in the file "
                               f"({name}={current!r}); {raw!r} is not one")
        if isinstance(current, int) and not isinstance(current, bool) and isinstance(value, float) \
                and value.is_integer():
            value = int(value)  # --set N=1e6 on an int constant: 1000000, not 1e6
        setattr(module, name, value)


def _is_number(value: Any) -> bool:
    """int or float, not bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def problem_tolerance(module: types.ModuleType, path: str) -> dict[str, dict[str, float]]:
    """The problem's tolerance overrides: a module-level ``TOLERANCE`` such as
    ``{"float32": {"atol": 1e-3, "rtol": 1e-3}}`` (dtype name -> atol and rtol, both
    finite and >= 0); {} when the file defines none. The harness applies them in place
    of its per-dtype defaults (manifest.json "tolerance", docs/fitness.md).

    Raises:
        ProblemError: TOLERANCE is not such a dict, names an unknown dtype, or has a
            missing, negative or non-numeric atol/rtol.
    """
    raw = getattr(module, "TOLERANCE", None)
    if raw is None:
        return {}
    known = sorted(SUPPORTED_DTYPES.values())
    hint = 'expected e.g. TOLERANCE = {"float32": {"atol": 1e-3, "rtol": 1e-3}}'
    if not isinstance(raw, dict):
        raise ProblemError(f"{path}: TOLERANCE is a {type(raw).__name__}; {hint}")
    result: dict[str, dict[str, float]] = {}
    for dtype, entry in raw.items():
        if dtype not in known:
            raise ProblemError(f"{path}: TOLERANCE names dtype {dtype!r}; known dtypes: {', '.join(known)}")
        if not isinstance(entry, dict) or set(entry) != {"atol", "rtol"}:
            raise ProblemError(f"{path}: TOLERANCE[{dtype!r}] must have exactly 'atol' and 'rtol'; {hint}")
        values = {}
        for key in ("atol", "rtol"):
            value = entry[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float("inf"):
                raise ProblemError(f"{path}: TOLERANCE[{dtype!r}][{key!r}] = {value!r}; expected a finite number >= 0")
            values[key] = float(value)
        result[dtype] = values
    return result


def _call_stage(path: str, where: str, fn: Any, *args: Any) -> Any:
    """Calls problem code; any exception becomes ProblemError
    "<path>: the reference raised <Type>: <msg> (in <where>)"."""
    try:
        return fn(*args)
    except (Exception, SystemExit) as exc:  # user code: anything may be raised
        suffix = "" if where == "forward()" else f" (in {where})"
        raise ProblemError(f"{path}: the reference raised {exception_line(exc)}{suffix}",
                           traceback.format_exc()) from exc


def build_model(module: types.ModuleType, path: str) -> torch.nn.Module:
    """Seeds torch with 0, calls get_init_inputs(), builds Model(*init) in eval mode.

    Raises:
        ProblemError: get_init_inputs() or Model() raised, or returned the wrong kind.
    """
    torch.manual_seed(0)
    init = _call_stage(path, "get_init_inputs()", module.get_init_inputs)
    if not isinstance(init, (list, tuple)):
        raise ProblemError(f"{path}: get_init_inputs() returned {type(init).__name__}; "
                           "expected a list of constructor arguments")
    model = _call_stage(path, "Model(*get_init_inputs())", module.Model, *init)
    if not isinstance(model, torch.nn.Module):
        raise ProblemError(f"{path}: Model(...) built a {type(model).__name__}, not an nn.Module")
    return model.eval()


def _as_tensor(value: Any, index: int, path: str) -> torch.Tensor:
    """One get_inputs() entry as a dense tensor (python scalars become 0-d tensors:
    bool -> bool, int -> int64, float -> float32)."""
    if isinstance(value, torch.Tensor):
        tensor = value.detach()
        return tensor if tensor.is_contiguous() else tensor.contiguous()
    if isinstance(value, bool):
        return torch.tensor(value, dtype=torch.bool)
    if isinstance(value, int):
        return torch.tensor(value, dtype=torch.int64)
    if isinstance(value, float):
        return torch.tensor(value, dtype=torch.float32)
    raise ProblemError(f"{path}: get_inputs() entry {index} is a {type(value).__name__}; "
                       "expected a tensor, int, float or bool")


def make_inputs(module: types.ModuleType, seed: int, path: str) -> list[torch.Tensor]:
    """Seeds torch with ``seed`` and calls get_inputs().

    Returns:
        The forward() arguments as dense, contiguous tensors, in get_inputs() order.
    Raises:
        ProblemError: get_inputs() raised, returned a non-sequence, or an entry of
            an unsupported type or dtype.
    """
    torch.manual_seed(seed)
    raw = _call_stage(path, "get_inputs()", module.get_inputs)
    if not isinstance(raw, (list, tuple)):
        raise ProblemError(f"{path}: get_inputs() returned {type(raw).__name__}; expected a list")
    inputs = [_as_tensor(v, i, path) for i, v in enumerate(raw)]
    for i, tensor in enumerate(inputs):
        check_dtype(tensor, f"input.{i}", path)
    return inputs


def flatten_outputs(result: Any, path: str, any_device: bool = False) -> list[torch.Tensor]:
    """forward()'s result as a list: a tensor, or a tuple/list of tensors in order.
    ``any_device``: the tensors may live on a GPU (else they must be CPU tensors).

    Raises:
        ProblemError: anything else (None, dicts, nested sequences, scalars), or a
            dtype the ABI does not carry.
    """
    if isinstance(result, torch.Tensor):
        items = [result]
    elif isinstance(result, (list, tuple)) and all(isinstance(t, torch.Tensor) for t in result):
        items = list(result)
    elif isinstance(result, (list, tuple)):
        index, item = next((i, t) for i, t in enumerate(result) if not isinstance(t, torch.Tensor))
        if isinstance(item, (list, tuple)):
            raise ProblemError(
                f"{path}: forward() returned a {type(result).__name__} whose item [{index}] is itself a "
                f"{type(item).__name__} (as nn.LSTM's (output, (h_n, c_n))); outputs must be a tensor or a "
                "flat tuple/list of tensors: unpack it, e.g. `out, (h, c) = self.lstm(x); return out, h, c`")
        raise ProblemError(f"{path}: forward() returned a {type(result).__name__} whose item [{index}] is a "
                           f"{type(item).__name__}; expected a tensor or a tuple/list of tensors")
    else:
        raise ProblemError(f"{path}: forward() returned {type(result).__name__}; expected a "
                           "tensor or a tuple/list of tensors")
    if not items:
        raise ProblemError(f"{path}: forward() returned an empty {type(result).__name__}")
    outputs = [t.detach().contiguous() for t in items]
    for i, tensor in enumerate(outputs):
        check_dtype(tensor, f"output.{i}", path, any_device)
    return outputs


def run_reference(model: torch.nn.Module, inputs: list[torch.Tensor], path: str,
                  to_cpu: bool = False, keep_device: bool = False) -> list[torch.Tensor]:
    """Runs model(*inputs) under no_grad on copies of the inputs (so an in-place
    forward cannot change the inputs kept for fixtures).

    Args:
        to_cpu: copy the outputs to the CPU first (a reference run on a GPU,
            reference_device.ReferenceRunner); else outputs must already be CPU tensors,
            unless ``keep_device`` (fixtures drawn on the GPU, device_fixtures.py).
    Returns:
        The outputs, flattened (see flatten_outputs).
    Raises:
        ProblemError: forward() raised ("the reference raised <Type>: <msg>") or
            returned something other than tensors.
    """
    with torch.no_grad():
        result = _call_stage(path, "forward()", model, *[t.clone() for t in inputs])
    if to_cpu and isinstance(result, torch.Tensor):
        result = result.cpu()
    elif to_cpu and isinstance(result, (list, tuple)):
        result = type(result)(t.cpu() if isinstance(t, torch.Tensor) else t for t in result)
    return flatten_outputs(result, path, any_device=keep_device)


def check_dtype(tensor: torch.Tensor, name: str, path: str, any_device: bool = False) -> None:
    """Raises ProblemError when ``tensor``'s dtype is not carried by the ABI
    (float32/64/16, bfloat16, int8/16/32/64, uint8, bool) or it is not on the CPU
    (unless ``any_device``)."""
    if tensor.dtype not in SUPPORTED_DTYPES:
        raise ProblemError(f"{path}: {name} has dtype {dtype_name(tensor.dtype)}, which the "
                           f"kernel ABI does not carry (supported: {', '.join(SUPPORTED_DTYPES.values())})")
    if not any_device and tensor.device.type not in ("cpu", "meta"):
        raise ProblemError(f"{path}: {name} is on device {tensor.device}; the CPU worker "
                           "needs CPU tensors")


def abi_parameters(model: torch.nn.Module, path: str) -> list[tuple[str, torch.Tensor]]:
    """("param.<key>", tensor) for every state_dict() entry, in state_dict() order.

    Raises:
        ProblemError: a state_dict entry that is not a tensor or has an unsupported dtype.
    """
    params = []
    for key, value in model.state_dict().items():
        if not isinstance(value, torch.Tensor):
            raise ProblemError(f"{path}: state_dict() entry '{key}' is a {type(value).__name__}, "
                               "not a tensor")
        name = f"param.{key}"
        check_dtype(value, name, path)
        params.append((name, value.detach().contiguous()))
    return params
