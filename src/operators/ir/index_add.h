// One accumulation of rows by index (torch.index_add along dim 0, index_put with
// accumulate=True), matched once for every target: the "index_add" family's C++
// (codegen/cpp/index_add_cpp.h) and Triton (codegen/triton/index_add_triton.h)
// printers both take this spec. The kernels read every size from the tensors at run
// time, so they serve input sets whose number of values differs (docs/abi.md).
#pragma once

#include <optional>

#include "core/op_graph.h"

namespace kernelevolve::operators::ir {

/// out = self; out[index[i]] += values[i] (the index form), or out[b] = self[b] + the
/// sum of the b-th contiguous run of lengths[b] values (the segment form).
struct IndexAddSpec {
  /// The output's starting value: an ABI input (copied) or a constant fill
  /// (torch.zeros / torch.full before index_add).
  bool self_is_input = false;
  int self = -1;      // ABI input index: float32 [rows, ...] when self_is_input
  double fill = 0.0;  // the fill value otherwise
  /// Index form: an ABI index tensor (int64 [n], each in [-rows, rows), negative
  /// counting from the end as in PyTorch), or segment lengths (int64 [segments], each
  /// >= 0, summing to n, segments <= rows).
  bool segments = false;
  int index = -1;    // ABI input index of the index tensor (segments == false)
  int lengths = -1;  // ABI input index of the lengths (segments == true)
  int values = -1;   // ABI input index: float32 [n, ...], trailing dims as the output's
  /// index_add's `alpha` (torch.Tensor.index_add(..., alpha=)): each value is
  /// multiplied by it in float32 before it is added, as PyTorch's decomposition does.
  bool scaled = false;
  double alpha = 1.0;
  /// Segments only: out[b] /= max(lengths[b], 1) after the sums (requires rows == segments).
  bool mean = false;
  int num_inputs = 0;  // ABI inputs the entry expects (at least)
};

/// The spec when `graph` is one aten.index_put.default (or its in-place spelling,
/// aten.index_put_.default) with
/// accumulate=True and a single index tensor over dim 0 of a float32 output, where
///   - self is an ABI input or aten.full of the output's shape,
///   - the index is an int64 1-D ABI input, or aten.repeat_interleave.Tensor of an int64
///     1-D ABI input (the lengths), possibly read through aten.index_select of
///     aten.arange(0, len(lengths), 1) (what torch.repeat_interleave(torch.arange(B),
///     lengths) captures as),
///   - values is a float32 ABI input whose trailing dims are the output's;
/// and the graph's one output is that result, or (segment form) that result divided by
/// the lengths clamped to at least 1, cast to float32 and unsqueezed at dim 1. nullopt
/// otherwise (the other families are tried).
std::optional<IndexAddSpec> MatchIndexAdd(const core::OpGraph& graph);

}  // namespace kernelevolve::operators::ir
