"""Input sets whose shapes differ (jagged values, bags of varying length) and outputs whose
shape depends on the data (unique, truncation, dense-to-jagged).

Every seed may give tensors of other sizes than the first seed, as long as each tensor
keeps its name, role, dtype and number of dimensions; the manifest then records each
set's shapes ("set_shapes", one {ABI name: shape} object per fixture file, same order as
"files"), and a kernel must read its sizes from the DLTensor shapes at run time.

A data-dependent output is declared by the problem with a bound (module-level constant)::

    OUTPUT_BOUNDS = {0: (4096,)}        # output index -> largest shape it can take

Such an output crosses the ABI at its bound shape, and one more output, named
"output.<k>.size" (int64, shape [ndim]), follows all of forward()'s outputs (in order of
k): the kernel writes the output's actual shape there and the output's elements, dense
and row-major in that actual shape, at the start of the bounded buffer. The harness
checks the size tensor exactly and compares only the written prefix (docs/abi.md,
"Outputs whose shape depends on the data").
"""

from __future__ import annotations

import types
from typing import Any

import torch

from .protocol import ProblemError

BOUNDS_NAME = "OUTPUT_BOUNDS"


def size_output_name(index: int) -> str:
    """"output.<index>.size": the int64 [ndim] tensor holding output ``index``'s actual shape."""
    return f"output.{index}.size"


def problem_output_bounds(module: types.ModuleType, path: str) -> dict[int, list[int]]:
    """The problem's OUTPUT_BOUNDS as {output index: bound shape}; {} when absent.

    Raises:
        ProblemError: not a dict of int >= 0 -> tuple/list of int >= 0.
    """
    raw = getattr(module, BOUNDS_NAME, None)
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ProblemError(f"{path}: {BOUNDS_NAME} must be a dict {{output index: shape tuple}}, got {type(raw).__name__}")
    bounds: dict[int, list[int]] = {}
    for key, shape in raw.items():
        if not isinstance(key, int) or isinstance(key, bool) or key < 0:
            raise ProblemError(f"{path}: {BOUNDS_NAME} keys must be output indices (int >= 0), got {key!r}")
        if not isinstance(shape, (tuple, list)) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
            raise ProblemError(f"{path}: {BOUNDS_NAME}[{key}] must be a tuple of ints >= 0, got {shape!r}")
        bounds[key] = [int(d) for d in shape]
    return bounds


def size_tensors(outputs: list[torch.Tensor], bounds: dict[int, list[int]], where: str,
                 path: str) -> list[tuple[str, torch.Tensor]]:
    """[("output.<k>.size", int64 tensor of output k's shape)] for every bounded output k.

    Args:
        outputs: forward()'s outputs on one input set.
        bounds: problem_output_bounds().
        where: "seed 1", "edge case 'large'" (for messages).
    Raises:
        ProblemError: a bound names a missing output, has another number of dimensions
            than the output, or is smaller than it in some dimension.
    """
    result = []
    for k, bound in sorted(bounds.items()):
        if k >= len(outputs):
            raise ProblemError(f"{path}: {BOUNDS_NAME} names output {k} but forward() returns {len(outputs)}")
        shape = list(outputs[k].shape)
        if len(shape) != len(bound) or any(s > b for s, b in zip(shape, bound)):
            raise ProblemError(f"{path}: output {k} on {where} has shape {shape}, outside its "
                               f"{BOUNDS_NAME} entry {bound}")
        result.append((size_output_name(k), torch.tensor(shape, dtype=torch.int64)))
    return result


def abi_output_specs(specs: list[dict[str, Any]], bounds: dict[int, list[int]]) -> list[dict[str, Any]]:
    """The outputs as they cross the ABI: forward()'s outputs (a bounded one at its bound
    shape, with "size_output": its size tensor's name), then one int64 [ndim] size
    tensor per bounded output."""
    result = []
    for k, spec in enumerate(specs):
        spec = dict(spec)
        if k in bounds:
            spec["shape"] = list(bounds[k])
            spec["size_output"] = size_output_name(k)
        result.append(spec)
    for k in sorted(bounds):
        result.append({"name": size_output_name(k), "role": "output", "shape": [len(bounds[k])],
                       "dtype": "int64"})
    return result


def check_same_layout(first: list[dict[str, Any]], other: list[dict[str, Any]], seed: int, path: str) -> None:
    """Raises ProblemError unless ``other`` (a seed's specs) has the same tensors as
    ``first`` with the same names, roles, dtypes and numbers of dimensions (sizes may differ)."""
    def layout(specs: list[dict[str, Any]]) -> list[tuple[str, str, str, int]]:
        return [(s["name"], s["role"], s["dtype"], len(s["shape"])) for s in specs]
    if layout(first) != layout(other):
        raise ProblemError(f"{path}: seed {seed} gives other tensors, dtypes or numbers of dimensions than the "
                           f"first seed ({layout(other)} vs {layout(first)}); only sizes may differ between seeds")


def check_value_independent_shapes(first_in: list[dict[str, Any]], first_out: list[dict[str, Any]],
                                   specs_in: list[dict[str, Any]], specs_out: list[dict[str, Any]],
                                   bounds: dict[int, list[int]], where: str, first_where: str, path: str) -> None:
    """Raises ProblemError when an output without an OUTPUT_BOUNDS entry changes shape
    between two input sets whose inputs have the same shapes: its size then depends on
    the input values, and a kernel could only be checked by being handed the reference's
    size, which it cannot know in use (docs/abi.md, "Outputs whose shape depends on the
    data"). Sets whose input shapes differ are not compared (sizes may follow them).

    Args:
        first_in, first_out: the first seed's input (and parameter) and output specs.
        specs_in, specs_out: another set's (a later seed, or an edge-case set).
        bounds: problem_output_bounds().
        where, first_where: the two sets for the message ("seed 1", "edge case 'zeros'").
    """
    if [s["shape"] for s in specs_in] != [s["shape"] for s in first_in] or len(specs_out) != len(first_out):
        return
    for k, (spec, first) in enumerate(zip(specs_out, first_out)):
        if k in bounds or spec["shape"] == first["shape"]:
            continue
        shown = tuple(max(a, b) for a, b in zip(spec["shape"], first["shape"])) if len(spec["shape"]) == len(
            first["shape"]) else tuple(first["shape"])
        raise ProblemError(f"{path}: output {k} has shape {list(first['shape'])} on {first_where} and "
                           f"{list(spec['shape'])} on {where}, whose inputs have the same shapes: its size depends "
                           f"on the input values. Declare a bound for it, e.g. {BOUNDS_NAME} = {{{k}: {shown}}} "
                           "(the largest shape it can take), so that kernels write its size themselves "
                           "(docs/abi.md, \"Outputs whose shape depends on the data\")")


def shape_map(specs: list[dict[str, Any]], sizes: list[tuple[str, torch.Tensor]]) -> dict[str, list[int]]:
    """{ABI name: shape} of one input set: its input, parameter and output specs (actual
    shapes), and the size tensors ([ndim])."""
    shapes = {s["name"]: list(s["shape"]) for s in specs}
    shapes.update({name: [t.numel()] for name, t in sizes})
    return shapes


def output_buffers(specs: list[dict[str, Any]], refs: list[torch.Tensor]) -> list[torch.Tensor]:
    """Uninitialized output buffers for one call, on the references' device: a bounded
    output (its spec has "size_output") at its bound shape, every other one shaped as
    its reference ``refs[i]`` (the manifest's ABI outputs, in order)."""
    return [torch.empty(spec["shape"], dtype=ref.dtype, device=ref.device) if "size_output" in spec
            else torch.empty_like(ref) for spec, ref in zip(specs, refs)]


def trim_outputs(specs: list[dict[str, Any]], outs: list[torch.Tensor], refs: list[torch.Tensor]) -> list[torch.Tensor]:
    """``outs`` made comparable with ``refs``: a bounded output whose size tensor equals
    the reference's is cut to its first refs[i].numel() elements in the reference's shape
    (docs/abi.md); others, and a bounded one with a wrong size (its comparison then
    fails on the shape, as does its size tensor), are returned as they are."""
    names = [s["name"] for s in specs]
    result = list(outs)
    for i, spec in enumerate(specs):
        if "size_output" not in spec:
            continue
        j = names.index(spec["size_output"])
        if torch.equal(outs[j].cpu(), refs[j].cpu()) and refs[i].numel() <= outs[i].numel():
            result[i] = outs[i].reshape(-1)[:refs[i].numel()].reshape(refs[i].shape)
    return result
