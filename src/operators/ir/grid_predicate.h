// A bool [L, S] tensor that a graph builds from index comparisons, read back as a
// half-plane over the grid of rows i and columns j. torch.triu / torch.tril on a bool
// matrix are captured this way (Core ATen has no triu): triu(ones(L, S), d) becomes
//   full([L, S], True) AND (unsqueeze(arange(S), -2) - unsqueeze(arange(L), -1) >= d)
// and tril(…, d) the same with `<= d`. The attention matcher reads a causal mask
// through it (attention_explicit.h).
#pragma once

#include <cstdint>
#include <optional>
#include <set>

#include "core/op_graph.h"

namespace kernelevolve::operators::ir {

/// The cells (i, j) of an [L, S] grid where a * i + b * j + c >= 0 (integers).
struct GridHalfPlane {
  int64_t a = 0, b = 0, c = 0;
  /// The complement: a * i + b * j + c < 0, i.e. -a * i - b * j - c - 1 >= 0.
  GridHalfPlane Not() const { return {-a, -b, -c - 1}; }
};

/// The half-plane that bool node `node` holds on the [rows, cols] grid, or nullopt.
/// `node`'s shape must be [rows, cols] (leading 1s allowed). Accepted, recursively:
///   - integer grids: arange(start, end, 1) of length cols (the column index j + start,
///     as a 1-d tensor or unsqueezed to [1, cols]) or of length rows unsqueezed to
///     [rows, 1] (the row index i + start); add / sub of two grids (alpha an integer)
///     or of a grid and an integer;
///   - comparisons ge / gt / le / lt / eq / ne of a grid with an integer scalar (eq and
///     ne only where the grid is a bool or 0 / 1 one, below), and ge / gt / le / lt of two grids;
///   - logical_and / bitwise_and with full(…, True) (either side), logical_not /
///     bitwise_not;
///   - a 0 / 1 indicator where(p, x, y) with x, y constants (full or scalar_tensor) read
///     through eq / ne with a constant or a _to_copy to bool (tril() on a float matrix).
/// Every call read is added to `used` (so the caller can tell that nothing else is in
/// the graph). Anything else (two half-planes and-ed, a non-integer threshold, a
/// computed input) gives nullopt.
std::optional<GridHalfPlane> MatchGridHalfPlane(const core::OpGraph& graph,
                                                const core::OpNode& node, int64_t rows,
                                                int64_t cols, std::set<const core::OpNode*>& used);

}  // namespace kernelevolve::operators::ir
