// Output comparison against the reference, numpy.allclose-style.
#pragma once

#include "core/evaluation.h"
#include "core/problem.h"
#include "eval/safetensors.h"

namespace kernelevolve::eval {

/// Default tolerance per dtype: float32 atol = rtol = 1e-4; float64 1e-7; float16
/// atol 1e-5, rtol 1e-3 and bfloat16 atol 1e-5, rtol 1.6e-2 (torch.testing.assert_close's
/// defaults, about one unit in the last place; a flat 1e-2 passed a kernel off by half
/// at every output below 1e-2); integer and bool types exact (0, 0). A half-precision
/// chain that rounds in another order than eager differs by more where an intermediate
/// cancels: the seed sets' per-element allowance covers that (ElementAllowance).
core::Tolerance DefaultTolerance(core::DType dtype);

/// A per-element widening of the tolerance on top of atol and rtol: element i of a
/// floating-point output also may differ by `multiple` x scale[i]. The edge-case sets
/// use it with eager PyTorch's own float rounding error at each element (fixture
/// tensor "allowance.output.N", eval/fixture_manifest.h) and the problem's
/// EAGER_ERROR_MULTIPLE, so a wider tolerance only where eager itself is inexact.
struct ElementAllowance {
  /// float32, as many elements as the reference (same flat order), values >= 0 and
  /// finite, in the output's units; not owned. nullptr: no allowance.
  const HostTensor* scale = nullptr;
  /// Factor on scale[i]; finite and >= 0 (0 adds nothing).
  double multiple = 0;
};

/// Compares `actual` with `expected` element by element: an element passes when
/// |a - e| <= atol + rtol * |e| + allowance.multiple * allowance.scale[i] (the last term
/// only for floating-point dtypes and when allowance.scale is set), when both are NaN,
/// or when both are the same infinity.
/// A shape or dtype mismatch fails with a note and no element comparison.
/// max_rel_error is |a - e| / max(|e|, 1e-12) over finite pairs.
/// Elements are compared in double: float16/bfloat16 converted exactly (eval/half.h),
/// integers and bool (0/1) with their exact difference. Fills every OutputCheck field
/// except seed_index and output (the caller's). `note` is empty when the only failures
/// are values outside tolerance; otherwise it says "dtype mismatch: got X, expected Y",
/// "shape mismatch: got [..], expected [..]", "byte size mismatch: ...", or lists the
/// NaN/Inf parity failures with counts, e.g. "NaN where reference is finite (3 elements);
/// Inf where reference is finite (1 element)". check.atol and check.rtol are the plain
/// tolerance's (without the allowance). Throws InvalidInputError when atol or rtol is
/// negative or NaN, when allowance.multiple is negative or not finite, or when
/// allowance.scale is not float32 or has another element count (or byte size) than
/// `expected`.
core::OutputCheck CompareTensors(const HostTensor& actual, const HostTensor& expected,
                                 const core::Tolerance& tolerance,
                                 const ElementAllowance& allowance = {});

}  // namespace kernelevolve::eval
