"""Edge-case input sets: the first seed's inputs pushed to the corners of the float range.

Seeded random inputs (``torch.randn``) rarely reach the values where kernels break:
an exp that overflows, a reduction that loses precision, a branch never taken. Beside
the seeded sets, every candidate is checked once on each of these sets, built from the
first seed's inputs (seed 0 unless the caller lists other seeds) by transforming the
floating-point forward() arguments only (integer and bool inputs, e.g. class indices
or masks, and module parameters are kept):

    zeros     every element 0
    negative  -|x|                  (all <= 0)
    large     x * 1e4               (exp(x) overflows, x^2 reaches 1e8)
    tiny      x * 1e-30             (squares underflow; products reach subnormals)

References for these sets are computed in float64 and rounded to the output dtype
(float64_reference), so summation order does not decide correctness at large magnitudes.
Eager PyTorch's own error on a set (its float32 result against that reference,
reference_error) is recorded in the manifest: at x * 1e4 a float32 product of K terms
of 1e8 is off by hundreds wherever the terms cancel, which no kernel, eager included,
meets within atol 1e-4 + rtol 1e-4 * |ref|. On such a set each element's tolerance adds
a multiple of eager's own rounding error at that element (eager_error.py; the
"allowance.output.<i>" tensors of the set's file).

A problem file may restrict them with two optional module-level constants:

    EDGE_CASES = ["large", "tiny"]                    # which sets apply ([] = none)
    INPUT_DOMAIN = {"predictions": (0.0, 1.0)}        # valid closed range per input

and set the multiple of that per-element allowance with a third:

    EAGER_ERROR_MULTIPLE = 8   # the default; 0 turns the allowance off

It applies to the edge sets and, on GPU targets, to every set, whose eager error the GPU
runner measures on the device (where a reference running TF32, cuDNN's float32
convolutions by default, then lets TF32 kernels pass; gpu_runner.py). An element where
eager does not depend on rounding (a relu's clipped zeros, a saturated tanh) gets no
allowance, so a kernel wrong there still fails.

``INPUT_DOMAIN`` keys are forward() parameter names or ABI names ("input.0"); an edge
set that puts any element of such an input outside its range is skipped, with the
reason recorded in manifest.json ("edge_skipped"). So is a set that unsorts a float
input the seed has sorted along its last dim (searchsorted / bucketize boundaries:
"negative" reverses their negative part). A set whose reference raises, or
gives outputs of other shapes or dtypes than the seeds, is skipped the same way.
"""

from __future__ import annotations

import copy
import inspect
import math
import types
from typing import Any, Callable

import torch

from .protocol import ProblemError

LARGE_SCALE = 1e4
TINY_SCALE = 1e-30
# The default EAGER_ERROR_MULTIPLE. The idea is torch._dynamo's accuracy check, which
# passes a compiled result whose error against a float64 reference is within a multiple
# of eager's own error (torch/_dynamo/utils.py, same(..., fp64_ref)). 8, not dynamo's 2,
# because eager's float32 GEMMs sum K in blocks: a kernel summing K in one sequential
# fused-multiply-add loop was up to 4.0x eager's per-element error scale
# (eager_error.py) at K = 4096, an im2col convolution (K = 144) 1.4x, while a relu
# made leaky or a tanh off by 0.1% failed at every element they changed (inputs
# randn x 1e4; build VM, torch 2.11).
SUGGESTED_EAGER_ERROR_MULTIPLE = 8.0
# The largest EAGER_ERROR_MULTIPLE a problem may set: far beyond any summation order's
# ratio (at most 4x measured), while a multiple of 1e9 would accept nearly any result
# wherever rounding matters (a fresh-clone review set one without complaint).
MAX_EAGER_ERROR_MULTIPLE = 100.0


def problem_eager_error_multiple(module: types.ModuleType, path: str) -> float:
    """The problem's ``EAGER_ERROR_MULTIPLE`` (a number in [0, MAX_EAGER_ERROR_MULTIPLE];
    0 = no allowance), else SUGGESTED_EAGER_ERROR_MULTIPLE.

    Raises:
        ProblemError: it is not such a number.
    """
    raw = getattr(module, "EAGER_ERROR_MULTIPLE", None)
    if raw is None:
        return SUGGESTED_EAGER_ERROR_MULTIPLE
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw <= MAX_EAGER_ERROR_MULTIPLE:
        raise ProblemError(f"{path}: EAGER_ERROR_MULTIPLE = {raw!r}; expected a number from 0 (no allowance) to "
                           f"{MAX_EAGER_ERROR_MULTIPLE:g}, or leave it out for the default "
                           f"{SUGGESTED_EAGER_ERROR_MULTIPLE:g}")
    return float(raw)

_TRANSFORMS: dict[str, tuple[str, Callable[[torch.Tensor], torch.Tensor]]] = {
    "zeros": ("every float input element 0", torch.zeros_like),
    "negative": ("float inputs replaced by -|x|", lambda x: -x.abs()),
    "large": (f"float inputs scaled by {LARGE_SCALE:g}", lambda x: x * LARGE_SCALE),
    "tiny": (f"float inputs scaled by {TINY_SCALE:g}", lambda x: x * TINY_SCALE),
}

ALL_EDGE_CASES = tuple(_TRANSFORMS)


def describe(name: str) -> str:
    """One line saying how edge set ``name`` is built, e.g. "float inputs scaled by 10000"."""
    return _TRANSFORMS[name][0]


def problem_edge_cases(module: types.ModuleType, path: str) -> list[str]:
    """The edge sets the problem allows: its ``EDGE_CASES`` list, else all of them.

    Raises:
        ProblemError: EDGE_CASES is not a list/tuple of known names, or repeats one.
    """
    raw = getattr(module, "EDGE_CASES", None)
    if raw is None:
        return list(ALL_EDGE_CASES)
    hint = f"expected a list drawn from {list(ALL_EDGE_CASES)} (or [] for none)"
    if not isinstance(raw, (list, tuple)) or not all(isinstance(n, str) for n in raw):
        raise ProblemError(f"{path}: EDGE_CASES = {raw!r}; {hint}")
    unknown = [n for n in raw if n not in _TRANSFORMS]
    if unknown:
        raise ProblemError(f"{path}: EDGE_CASES names unknown set(s) {unknown}; {hint}")
    if len(set(raw)) != len(raw):
        raise ProblemError(f"{path}: EDGE_CASES repeats a name: {raw!r}")
    return list(raw)


def forward_argument_names(model: torch.nn.Module) -> list[str]:
    """forward()'s positional parameter names, in order (no ``self``; *args stops the list)."""
    names = []
    for param in inspect.signature(model.forward).parameters.values():
        if param.kind not in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            break
        names.append(param.name)
    return names


def problem_input_domain(module: types.ModuleType, path: str, arg_names: list[str],
                         num_inputs: int) -> dict[int, tuple[float, float]]:
    """The problem's ``INPUT_DOMAIN`` as {input index: (low, high)}; {} when undeclared.

    Args:
        arg_names: forward()'s parameter names (forward_argument_names).
        num_inputs: how many tensors get_inputs() returns.
    Raises:
        ProblemError: not a dict, a key that names no input, or a range that is not two
            numbers with low <= high.
    """
    raw = getattr(module, "INPUT_DOMAIN", None)
    if raw is None:
        return {}
    hint = 'expected e.g. INPUT_DOMAIN = {"x": (0.0, 1.0)} (forward() argument name or "input.N" -> (low, high))'
    if not isinstance(raw, dict):
        raise ProblemError(f"{path}: INPUT_DOMAIN is a {type(raw).__name__}; {hint}")
    domain: dict[int, tuple[float, float]] = {}
    for key, bounds in raw.items():
        index = _input_index(key, arg_names, num_inputs)
        if index is None:
            known = [f"input.{i}" for i in range(num_inputs)] + arg_names[:num_inputs]
            raise ProblemError(f"{path}: INPUT_DOMAIN key {key!r} names no input; known: {known}")
        ok = (isinstance(bounds, (list, tuple)) and len(bounds) == 2
              and all(isinstance(b, (int, float)) and not isinstance(b, bool) for b in bounds)
              and not any(math.isnan(b) for b in bounds) and bounds[0] <= bounds[1])
        if not ok:
            raise ProblemError(f"{path}: INPUT_DOMAIN[{key!r}] = {bounds!r}; {hint}")
        domain[index] = (float(bounds[0]), float(bounds[1]))
    return domain


def _input_index(key: Any, arg_names: list[str], num_inputs: int) -> int | None:
    if isinstance(key, str) and key.startswith("input."):
        suffix = key[len("input."):]
        if suffix.isdigit() and int(suffix) < num_inputs:
            return int(suffix)
        return None
    if isinstance(key, str) and key in arg_names[:num_inputs]:
        return arg_names.index(key)
    return None


def edge_inputs(name: str, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """The forward() arguments of edge set ``name``: float tensors transformed, others kept."""
    transform = _TRANSFORMS[name][1]
    return [transform(t) if t.is_floating_point() else t for t in inputs]


def domain_violation(inputs: list[torch.Tensor], domain: dict[int, tuple[float, float]],
                     arg_names: list[str]) -> str | None:
    """Why ``inputs`` leave the declared domain ("'predictions' reaches 0 outside [1e-06, 1]"),
    or None when every constrained input stays inside its range."""
    for index, (low, high) in sorted(domain.items()):
        tensor = inputs[index]
        if tensor.numel() == 0 or not tensor.is_floating_point():
            continue
        lowest, highest = float(tensor.min()), float(tensor.max())
        name = _input_name(index, arg_names)
        if lowest < low:
            return f"'{name}' reaches {lowest:g} below its INPUT_DOMAIN [{low:g}, {high:g}]"
        if highest > high:
            return f"'{name}' reaches {highest:g} above its INPUT_DOMAIN [{low:g}, {high:g}]"
    return None


def _input_name(index: int, arg_names: list[str]) -> str:
    """forward()'s name for input ``index``, else its ABI name "input.<index>"."""
    return arg_names[index] if index < len(arg_names) else f"input.{index}"


def _sorted_last_dim(tensor: torch.Tensor) -> bool:
    """Whether ``tensor`` is non-decreasing along its last dim (NaN counts as unsorted)."""
    return bool((tensor[..., 1:] >= tensor[..., :-1]).all())


def order_violation(inputs: list[torch.Tensor], edge: list[torch.Tensor], arg_names: list[str]) -> str | None:
    """Why edge set ``edge`` breaks an order the seed's ``inputs`` have, or None.

    A float input sorted along its last dim and not constant there (e.g. searchsorted's or
    bucketize's boundaries, which PyTorch requires sorted: otherwise its result is
    unspecified) must stay sorted: -|x| reverses the negative part, so such a set says
    nothing about a kernel. Returns e.g. "'boundaries' is sorted along its last dim and
    this set unsorts it"."""
    for index, (before, after) in enumerate(zip(inputs, edge)):
        if not before.is_floating_point() or before.dim() == 0 or before.shape[-1] < 2 or after is before:
            continue
        if _sorted_last_dim(before) and bool((before[..., 1:] > before[..., :-1]).any()) \
                and not _sorted_last_dim(after):
            return f"'{_input_name(index, arg_names)}' is sorted along its last dim and this set unsorts it"
    return None


def float64_reference(model: torch.nn.Module, inputs: list[torch.Tensor],
                      outputs: list[torch.Tensor]) -> list[torch.Tensor]:
    """The reference outputs recomputed in float64 and rounded to ``outputs``' dtypes.

    At edge-case magnitudes a float32 reference carries the rounding of torch's own
    summation order (a sum of terms of 1e4 with cancellation is off by ~1e-3, far above
    atol), so a kernel that sums in another order, or in double, would be judged wrong.
    The float64 result rounded once is the exact answer up to float32 rounding. Returns
    ``outputs`` unchanged when the model cannot run in float64 (an op without a double
    kernel, a dtype check in forward) or gives other shapes, and for outputs that are
    not floating point (e.g. argmax indices, where ties decide).
    """
    if not any(t.is_floating_point() and t.dtype != torch.float64 for t in inputs):
        return outputs
    try:
        model64 = copy.deepcopy(model).double()
        wide = [t.double() if t.is_floating_point() else t for t in inputs]
        with torch.no_grad():
            result = model64(*wide)
    except Exception:  # user code: any failure means "keep the float32 reference"
        return outputs
    flat = list(result) if isinstance(result, (list, tuple)) else [result]
    if len(flat) != len(outputs) or not all(isinstance(t, torch.Tensor) for t in flat):
        return outputs
    exact = []
    for ref, wide_out in zip(outputs, flat):
        if not ref.is_floating_point() or wide_out.shape != ref.shape:
            exact.append(ref)
        else:
            exact.append(wide_out.to(ref.dtype).contiguous())
    return exact


def reference_error(eager: list[torch.Tensor], exact: list[torch.Tensor],
                    tolerance: Callable[[torch.dtype], tuple[float, float]] | None = None) -> list[float]:
    """Eager's own error on an edge set: per output, max |eager - exact| over the elements
    where both are finite (0.0 for non-float outputs, for outputs with no finite pair,
    and where ``exact`` is ``eager`` itself, i.e. float64_reference kept the float32
    result). With ``tolerance`` ((atol, rtol) of an output dtype), 0.0 also for an output
    where eager meets that tolerance at every element: the figure then says only where
    eager itself fails the check (what the mismatch hint reports; a max error of 640 at
    an element of 2.7e7 is inside rtol and says nothing).

    Args:
        eager: forward()'s outputs as computed (any float dtype, any device).
        exact: float64_reference's outputs (same shapes and dtypes as ``eager``).
        tolerance: the check's (atol, rtol) per dtype, or None.
    Returns:
        One float >= 0 per output, in the outputs' units.
    """
    errors = []
    for e32, e64 in zip(eager, exact):
        if e32 is e64 or not e32.is_floating_point() or e32.shape != e64.shape or e32.numel() == 0:
            errors.append(0.0)
            continue
        a, b = e32.double(), e64.to(e32.device).double()
        both = torch.isfinite(a) & torch.isfinite(b)
        diff = (a - b).abs()[both]
        missed = True
        if tolerance is not None:
            atol, rtol = tolerance(e32.dtype)
            missed = bool((diff > atol + rtol * b.abs()[both]).any())
        errors.append(float(diff.max()) if missed and diff.numel() > 0 else 0.0)
    return errors


def overflow_where_reference_finite(eager: list[torch.Tensor], exact: list[torch.Tensor]) -> str | None:
    """Why an edge set is left out when eager's own result is Inf or NaN at elements where
    the float64 reference is finite: an op's result overflowed the output dtype's range in
    eager (float16's 65504 at x * 1e4: a sum of 256 such inputs, a product of two), which
    the float64 reference, rounded once, does not do. A kernel computing as eager does
    cannot pass such a set, and the per-element allowance cannot cover an infinite error.
    None when eager is finite wherever the reference is.

    Args:
        eager: forward()'s outputs on the set (any float dtype, any device).
        exact: float64_reference's outputs (same shapes and dtypes).
    Returns:
        The reason, naming the output, its dtype and the count; or None.
    """
    for i, (e, x) in enumerate(zip(eager, exact)):
        if e is x or not e.is_floating_point() or e.shape != x.shape or e.numel() == 0:
            continue
        count = int((~torch.isfinite(e) & torch.isfinite(x.to(e.device))).sum())
        if count:
            dtype = str(e.dtype).replace("torch.", "")
            return (f"eager PyTorch's own {dtype} output.{i} is Inf or NaN at {count} of {e.numel()} elements "
                    f"where the float64 reference is finite (an op overflowed the {dtype} range in eager), "
                    "so no kernel computing as eager does can pass it")
    return None


def edge_file_name(name: str) -> str:
    """"edge_<name>.safetensors"."""
    return f"edge_{name}.safetensors"


def manifest_entries(written: list[tuple[str, str, list[float], list[str]]],
                     skipped: list[tuple[str, str]]) -> dict[str, Any]:
    """The manifest's "edge_cases" ([{"name", "file", "description", "reference_error",
    "allowance"}], files relative; reference_error {"output.<i>": eager's error} for the
    outputs where it is > 0, left out when there is none; allowance ["output.<i>"], the
    outputs whose "allowance.output.<i>" tensor the file holds, left out when none) and
    "edge_skipped" ([{"name", "reason"}]) entries.

    Args:
        written: (set name, file name, reference_error() per output, outputs with an
            allowance tensor).
    """
    def errors(values: list[float]) -> dict[str, float]:
        return {f"output.{i}": v for i, v in enumerate(values) if v > 0}

    def entry(name: str, file: str, values: list[float], allowance: list[str]) -> dict[str, Any]:
        result: dict[str, Any] = {"name": name, "file": file, "description": describe(name)}
        if errors(values):
            result["reference_error"] = errors(values)
        if allowance:
            result["allowance"] = list(allowance)
        return result

    return {
        "edge_cases": [entry(*w) for w in written],
        "edge_skipped": [{"name": n, "reason": r} for n, r in skipped],
    }
