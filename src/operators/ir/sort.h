// One torch.sort or torch.topk along a dim (aten.sort.default, aten.sort.stable,
// aten.topk.default), matched once for every target: the "sort" family's C++ printer
// (codegen/cpp/sort_cpp.h) and the Triton one (codegen/triton/sort_triton.h) both take
// this spec. Order, on every target: torch's (NaN larger than any other value, -0.0 equal
// to +0.0, equal elements in input order).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/dtype.h"
#include "core/op_graph.h"

namespace kernelevolve::operators::ir {

struct SortSpec {
  core::DType dtype = core::DType::kFloat32;  // float32 or int64
  int input = 0;           // ABI input index of the tensor sorted
  int rank = 1;            // its rank (>= 1)
  int dim = 0;             // the dim sorted along, in [0, rank)
  bool descending = false;  // sort: descending; topk: largest
  int64_t k = -1;          // topk: the number kept (the first k of the order); -1: sort (all)
  int num_inputs = 1;      // ABI inputs the entry expects (at least)
  /// Per ABI output: 0 the values, 1 the int64 indices (a graph may return either or both).
  std::vector<int> outputs;
};

/// The spec when `graph`'s only call is a sort or top-k of a float32 or int64 ABI input
/// (rank >= 1, constant dim and order, a constant k >= 0 for top-k) and every output is
/// its values (getitem 0) or indices (getitem 1); nullopt otherwise.
std::optional<SortSpec> MatchSort(const core::OpGraph& graph);

}  // namespace kernelevolve::operators::ir
