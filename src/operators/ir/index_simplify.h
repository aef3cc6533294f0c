// Index simplification with loop ranges: views lowered through reshapes leave floor
// division and remainder chains in load indices (Unflatten of a flat offset), which
// cost an integer division per element and keep compilers from vectorizing the read.
// Where a chain is affine over the loop indices' ranges (contraction.h, AffineOf with
// extents: floor((d q + r) / d) = q and (d q + r) mod d = r for r in [0, d)), it is
// printed as that affine form instead: (192 i0 + i1) mod 192 becomes i1 for i1 < 192.
#pragma once

#include <cstdint>
#include <vector>

#include "operators/ir/expr.h"
#include "operators/ir/tensor_program.h"

namespace kernelevolve::operators::ir {

/// `body` with each load index (and each int64 subexpression of an index) that contains
/// a floor division or a remainder and is affine over loop indices 0 .. extents.size()-1,
/// index v ranging over [0, extents[v]), replaced by constant + sum coeff_v * index v.
/// Exact for every value of the indices in those ranges, whatever the load masks are; an
/// index using another loop index or a size read at run time, or that is not affine, is
/// left as it is (its subexpressions are still tried). Shared subexpressions stay shared.
Expr SimplifyIndices(const Expr& body, const std::vector<int64_t>& extents);

/// `def`'s body with its indices simplified over its loops (its shape, then its reduced
/// extents); the body itself when a size is read at run time. For printers: the
/// matchers (contraction.h, convolution.h) read the body as the lowering spelled it.
Expr SimplifiedBody(const TensorDef& def);

/// `offset` (an int64 index expression) without its constant term, which is added to
/// `*constant`: sums, differences and products by a constant are distributed
/// ((i0 + 4) * 256 + i1 + 192 gives i0 * 256 + i1 and 1216); any other node (a floor
/// division, a remainder, a load) is kept whole, its constants in it. Exact:
/// rest + *constant equals `offset` for every value of its vars. For printers that
/// pass a load's constant offset as an argument (kernels that differ only in which
/// slice they read share one compiled kernel).
Expr SplitConstantTerm(const Expr& offset, int64_t* constant);

}  // namespace kernelevolve::operators::ir
