"""Eager PyTorch's own rounding error at each output element: the per-element allowance.

A reference of record is forward() in float64, rounded once to the output dtype
(edge_cases.float64_reference). Where float rounding moves an output by about the
tolerance (a product of K terms of 1e8 that cancel, on the "large" edge set; a
convolution cuDNN runs in TF32 on the GPU), a correct kernel that rounds its sum in
another order than eager misses the tolerance, and often eager itself does. Such an
input set gets an allowance per output element, the scale of float rounding error
*at that element*:

    scale_i = RMS over S runs of |y_s,i - exact_i|,   S = 8 (eager itself, and eager on
              the inputs with every float element moved by one unit of roundoff of the
              precision the reference computes in, up or down at random)

The perturbed runs sample the error a different summation order makes: an element whose
value cancels (a dot product near 0) varies, one that does not depend on rounding (a
relu's clipped zeros, a saturated tanh, a copy) does not, and gets scale 0. A sample of
8 is noisy per element, so the scale of an element where eager itself is off the reference is raised to the
median scale of such elements of its output (the error of a sum depends on the
magnitudes of its terms, not on the value it cancels to); an element eager gets exactly
right (a copied input, whose moved runs differ by the move alone) keeps its own scale. An element then passes when

    |kernel_i - exact_i| <= atol + rtol * |exact_i| + EAGER_ERROR_MULTIPLE * scale_i

(src/eval/tolerance.h; gpu_checks.compare). The idea follows torch._dynamo's accuracy
check, which compares a compiled result's error against a float64 reference with a
multiple of eager's own error (torch/_dynamo/utils.py, ``same(..., fp64_ref)``), made
per element so that a kernel wrong where eager is exact still fails.

The unit of roundoff is torch.finfo(dtype).eps of each input, unless eager rounds more
coarsely than that: cuDNN runs float32 convolutions in TF32 by default
(torch.backends.cudnn.allow_tf32), and then moving the inputs by one float32 unit hardly
changes eager's result (its first moved run differs from it by less than a quarter of
its own error), so the runs move float32 inputs by TF32's unit, 2**-10, instead (on a
CUDA device only: the caller says so). The
scale then follows the precision eager really ran in: TF32's where cuDNN used it,
float32's elsewhere.
"""

from __future__ import annotations

from typing import Callable

import torch

SAMPLES = 8
# The unit of roundoff of TF32 (10 explicit mantissa bits; NVIDIA A100 Tensor Core GPU
# Architecture whitepaper, 2020), the precision cuDNN runs float32 convolutions in by
# default (torch.backends.cudnn.allow_tf32).
REDUCED_EPS = 2.0 ** -10
# Eager counts as rounding more coarsely than float32 when a run on inputs moved by one
# float32 unit differs from eager by less than this fraction of eager's own error (RMS
# over the output): a float32 computation changes about as much as it errs.
REDUCED_VARIATION = 1 / 4
# An output gets an allowance when rounding moves some element by more than this
# fraction of its tolerance (the reciprocal of the default EAGER_ERROR_MULTIPLE).
RELEVANT_FRACTION = 1 / 8
# Elements per step of the element-wise passes below: their float64 temporaries stay at
# 128 MB each whatever the output's size (on an H100, a 537M-element output's passes
# over whole tensors asked for 16 GiB at once and ran out of memory); what is kept whole
# is one float64 sum of squares per output (8 bytes an element), the float32 scale and,
# while the floor is applied, a bool mask of the elements it covers.
CHUNK_ELEMENTS = 1 << 24
# The floor's median is taken over at most this many of the elements it covers (every
# k-th one, in flat order): exact up to that count, an estimate of it beyond.
MEDIAN_SAMPLE = 1 << 24


def _chunks(n: int) -> list[slice]:
    """CHUNK_ELEMENTS-long steps over n elements, as slices of a flat tensor."""
    return [slice(s, s + CHUNK_ELEMENTS) for s in range(0, n, CHUNK_ELEMENTS)]


def _add_squared_error(total: torch.Tensor, out: torch.Tensor, target: torch.Tensor) -> None:
    """total += (out - target)^2 element-wise (0 where the difference is not finite),
    in float64: ``total`` is flat float64, so that the square of any float32 difference
    stays finite (in a float32 sum, an error past 1.8e19 squared to inf and the
    allowance became unlimited there)."""
    o, t = out.reshape(-1), target.reshape(-1)
    for c in _chunks(total.numel()):
        d = o[c].double() - t[c].double()
        total[c] += torch.where(torch.isfinite(d), d * d, 0.0)


def _exceeds_fraction(total: torch.Tensor, target: torch.Tensor, atol: float, rtol: float) -> bool:
    """Whether total > ((atol + rtol |target|) RELEVANT_FRACTION)^2 at some element."""
    t = target.reshape(-1)
    for c in _chunks(total.numel()):
        bound = (atol + rtol * t[c].double().abs()) * RELEVANT_FRACTION
        if bool((total[c] > bound * bound).any()):
            return True
    return False


def _floor_at_median(scale: torch.Tensor, eager: torch.Tensor, target: torch.Tensor) -> None:
    """Raises, in place, each element of the flat ``scale`` where eager is off the
    reference (finite, nonzero difference) and the scale is positive to the median
    scale of such elements (over at most MEDIAN_SAMPLE of them)."""
    e, t = eager.reshape(-1), target.reshape(-1)
    chunks = _chunks(scale.numel())
    rounded = torch.empty(scale.numel(), dtype=torch.bool, device=scale.device)
    for c in chunks:
        d = e[c].double() - t[c].double()
        rounded[c] = (scale[c] > 0) & torch.isfinite(d) & (d != 0)
    count = int(rounded.sum())
    if count == 0:
        return
    stride, skip, picked = -(-count // MEDIAN_SAMPLE), 0, []
    for c in chunks:
        values = scale[c][rounded[c]]
        picked.append(values[skip::stride])
        skip = (skip - values.numel()) % stride
    floor = float(torch.cat(picked).median())
    for c in chunks:
        scale[c] = torch.where(rounded[c], scale[c].clamp_min(floor), scale[c])


def perturbed(inputs: list[torch.Tensor], eps: float, generator: torch.Generator) -> list[torch.Tensor]:
    """``inputs`` with every float element multiplied by 1 +- eps (sign at random per
    element, from ``generator``, which lives on the inputs' device); others as they are."""
    result = []
    for x in inputs:
        if not x.is_floating_point() or x.numel() == 0:
            result.append(x)
            continue
        sign = torch.randint(0, 2, x.shape, generator=generator, device=x.device).double().mul_(2).sub_(1)
        result.append((x.double() * (1 + eps * sign)).to(x.dtype))
    return result


def element_error_scale(run: Callable[[list[torch.Tensor]], list[torch.Tensor]], inputs: list[torch.Tensor],
                        eager: list[torch.Tensor], exact: list[torch.Tensor],
                        tolerance: Callable[[torch.dtype], tuple[float, float]],
                        eps: float | None = None, coarse_eager: bool = False) -> list[torch.Tensor | None]:
    """The per-element allowance scale of each output on one input set (module docstring).

    The first perturbed run decides whether an output needs one: it does when eager or
    that run is off the reference by more than RELEVANT_FRACTION of the tolerance at some
    element (another summation order may then be off by the whole tolerance: eager's
    blocked sum can meet it where a sequential one does not); only then do the other
    runs follow.

    Args:
        run: forward() on a list of inputs, returning its outputs (same count and shapes
            as ``eager``); may raise (user code): the samples taken so far are kept.
        inputs: forward()'s arguments for this set (float ones get perturbed).
        eager: forward(inputs) as eager computed it.
        exact: the reference of record (float64 rounded once; same shapes and dtypes).
        tolerance: (atol, rtol) for an output dtype.
        eps: the unit of roundoff to perturb by; None: each input dtype's machine epsilon.
        coarse_eager: eager may round more coarsely than its dtype (on a CUDA device:
            cuDNN's TF32); only then is REDUCED_EPS tried (on the CPU the unit stays the
            dtype's whatever the first run shows).
    Returns:
        Per output: None where rounding stays far inside the tolerance (no allowance),
        for non-float outputs and for outputs ``exact`` kept as ``eager``; else a
        float32 tensor of the output's shape on the output's device, >= 0 and finite.
    """
    candidates = [i for i, (e32, e64) in enumerate(zip(eager, exact))
                  if e32 is not e64 and e32.is_floating_point() and e32.shape == e64.shape and e32.numel() > 0]
    scales: list[torch.Tensor | None] = [None] * len(eager)
    if not candidates:
        return scales
    targets = {i: exact[i].to(eager[i].device) for i in candidates}

    def squared_error(i: int, out: torch.Tensor) -> torch.Tensor:
        total = torch.zeros(out.numel(), dtype=torch.float64, device=out.device)
        _add_squared_error(total, out, targets[i])
        return total

    generators: dict[torch.device, torch.Generator] = {}
    unit_of = [eps if eps is not None else (torch.finfo(x.dtype).eps if x.is_floating_point() else 0.0)
               for x in inputs]

    def sample() -> list[torch.Tensor] | None:
        moved = []
        for x, unit in zip(inputs, unit_of):
            if x.device not in generators:
                generators[x.device] = torch.Generator(device=x.device).manual_seed(len(generators) + 1)
            moved.append(perturbed([x], unit, generators[x.device])[0])
        try:
            with torch.no_grad():
                outs = run(moved)
        except Exception:  # user code: keep the samples taken so far
            return None
        if len(outs) != len(eager) or any(outs[i].shape != eager[i].shape for i in candidates):
            return None
        return outs

    total = {i: squared_error(i, eager[i]) for i in candidates}
    first = sample()
    samples = 1
    if first is not None:
        for i in candidates:
            _add_squared_error(total[i], first[i], targets[i])
        samples = 2
    needed = []
    for i in candidates:
        atol, rtol = tolerance(eager[i].dtype)
        if _exceeds_fraction(total[i], targets[i], atol, rtol):  # some run is off by more than that
            needed.append(i)
    if not needed:
        return scales
    if first is not None and eps is None and coarse_eager and _reduced_precision(needed, eager, first, targets):
        # Eager rounds more coarsely than its inputs' dtype (cuDNN's TF32): moving the
        # inputs by their own unit hardly changes its result, so the runs would repeat
        # eager's own error, 0 wherever it happens to round exactly. Sample again, moving
        # them by TF32's unit.
        unit_of = [REDUCED_EPS if x.dtype == torch.float32 else u for x, u in zip(inputs, unit_of)]
        total = {i: squared_error(i, eager[i]) for i in candidates}
        samples = 1
    while first is not None and samples < SAMPLES:
        outs = sample()
        if outs is None:
            break
        for i in needed:
            _add_squared_error(total[i], outs[i], targets[i])
        samples += 1
    for i in needed:
        sums = total.pop(i)
        scale = torch.empty(sums.numel(), dtype=torch.float32, device=sums.device)
        for c in _chunks(scale.numel()):
            scale[c] = (sums[c] / samples).sqrt()
        del sums
        # The floor lifts only elements where eager itself is off the reference: a copied
        # input is exact in eager, and its moved runs differ by the move alone, far below
        # a product's scale (a fresh-clone review got +200 accepted on the copied half of
        # cat([a @ b, r]) when every element took the output's median).
        _floor_at_median(scale, eager[i], targets[i])
        scales[i] = scale.nan_to_num_(posinf=torch.finfo(torch.float32).max).reshape(eager[i].shape)
    return scales


def _reduced_precision(outputs: list[int], eager: list[torch.Tensor], moved: list[torch.Tensor],
                       targets: dict[int, torch.Tensor]) -> bool:
    """Whether, for some output in ``outputs``, the run on moved inputs differs from eager
    by less than REDUCED_VARIATION of eager's own error against ``targets`` (RMS over
    the elements where all three are finite)."""
    for i in outputs:
        error = variation = 0.0
        count = 0
        flat_e, flat_m, flat_x = eager[i].reshape(-1), moved[i].reshape(-1), targets[i].reshape(-1)
        for c in _chunks(flat_e.numel()):
            e, m, x = (t[c].double() for t in (flat_e, flat_m, flat_x))
            finite = torch.isfinite(e) & torch.isfinite(m) & torch.isfinite(x)
            error += float(((e - x)[finite] ** 2).sum())
            variation += float(((m - e)[finite] ** 2).sum())
            count += int(finite.sum())
        if count > 0 and error > 0 and variation < error * REDUCED_VARIATION ** 2:
            return True
    return False
