// Loop splitting around the masks of a loop body ("index-set splitting", e.g. Wolfe,
// High Performance Compilers for Parallel Computing, 1996, section 9.3): the reads of a
// padded window (pooling, a padded convolution as a loop nest) are masked by range
// checks that hold everywhere except near the edges. When every load mask of a body is
// a conjunction of comparisons whose operands are affine in the loop indices, the set
// of values of one index v where all of them hold is an interval [lo, hi) computable at
// run time, and over that interval the body needs no mask: a backend prints the loop
// over v as three loops (before, interior, after) with the interior one unmasked, so
// that the compiler can vectorize its reads (a masked gather is not vectorized by GCC
// on x86; the unmasked strided read is).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "operators/ir/contraction.h"
#include "operators/ir/expr.h"

namespace kernelevolve::operators::ir {

/// One comparison of a load mask, normalized to `form >= 0` (form affine in the loop
/// indices: a >= b as a - b, a > b as a - b - 1, a <= b as b - a, a < b as b - a - 1).
struct MaskBound {
  Affine form;
};

/// The split of a loop body at its mask bounds.
struct InteriorSplit {
  /// Every comparison of every load mask; all hold on the interior.
  std::vector<MaskBound> bounds;
  /// The body with each of those comparisons replaced by `true` (valid only where all
  /// bounds hold).
  Expr interior_body;
};

/// The split of `body` when it has at least one masked load and every load mask is a
/// conjunction (logical_and, nested) of int64 comparisons lt / le / gt / ge whose
/// operands are affine in the loop indices (AffineOf, no var extents); nullopt otherwise
/// (a mask read from a tensor, an eq / ne, an or, a floor division that does not cancel).
/// A backend reads the interval of one loop index from the bounds' coefficients of it;
/// bounds without that index only decide whether the interior is empty.
std::optional<InteriorSplit> SplitAtMaskBounds(const Expr& body);

/// The comparisons of the bool expression `cond`, a conjunction (logical_and, nested)
/// of int64 comparisons lt / le / gt / ge with affine operands, each as form >= 0 (as
/// MaskBound); nullopt when a part of it is anything else. True constants are skipped.
std::optional<std::vector<Affine>> ConjunctionBounds(const Expr& cond);

}  // namespace kernelevolve::operators::ir
