"""Refuses a reference whose outputs change from call to call.

A forward() that draws random numbers (``F.dropout(training=True)``,
``F.scaled_dot_product_attention(dropout_p > 0)``, ``torch.rand`` inside forward) gives
other outputs on every call, so no kernel can be checked against it: the loader calls
it twice on the first input set and compares the two results with the checker's own
rule (gpu_checks.compare: ``|a - b| <= atol + rtol * |b|``, the problem's TOLERANCE or
the defaults of src/eval/tolerance.cpp). Differences inside that tolerance (a reduction
order that varies between calls) are accepted, as the checker would accept them.
Two calls cannot catch a forward() that changes only on a later call (a counter that
switches behaviour after N calls); candidates then fail on seed 0 with no other hint.
"""

from __future__ import annotations

from typing import Callable

import torch

from .gpu_checks import compare
from .protocol import ProblemError


def check_deterministic(path: str, first: list[torch.Tensor], rerun: Callable[[], list[torch.Tensor]],
                        overrides: dict[str, dict[str, float]]) -> None:
    """Calls ``rerun()`` (forward() on the same inputs again) and compares its outputs
    with ``first``.

    Raises:
        ProblemError: an output differs beyond the tolerance, naming the output, the
            largest difference and the usual causes.
    """
    second = rerun()
    for index, (a, b) in enumerate(zip(first, second)):
        check = compare(b, a, 0, f"output.{index}", overrides)
        if check["passed"]:
            continue
        if a.is_floating_point():
            detail = (f"{check['note'] or 'max abs difference ' + format(check['max_abs_error'], '.3g')}, "
                      f"{check['mismatches']} elements past atol {check['atol']:g} / rtol {check['rtol']:g}")
        else:
            detail = f"{check['mismatches']} of {a.numel()} elements differ"
        raise ProblemError(
            f"{path}: forward() is not deterministic: two calls on the same inputs give different "
            f"output.{index} ({detail}); a random op (dropout in training mode, "
            "scaled_dot_product_attention with dropout_p > 0, torch.rand* inside forward) or state "
            "that forward() changes (a buffer or attribute updated on every call) cannot be checked "
            "against: remove it, or draw its randomness in get_inputs()")
