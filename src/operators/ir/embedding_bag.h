// One pooled embedding lookup (aten._embedding_bag), matched once for every target:
// the "embedding_bag" family's C++ (codegen/cpp/embedding_bag_cpp.h) and Triton
// (codegen/triton/embedding_bag_triton.h) printers both take this spec. The kernels
// read every size (rows, dim, number of indices, number of bags) from the tensors at
// run time, so they serve input sets whose numbers of indices differ (docs/abi.md).
#pragma once

#include <optional>
#include <string>

#include "core/dtype.h"
#include "core/op_graph.h"

namespace kernelevolve::operators::ir {

/// What the kernel computes: torch.nn.functional.embedding_bag(indices, weight, offsets,
/// mode, per_sample_weights, include_last_offset) with the ATen defaults otherwise
/// (no padding_idx, no max_norm).
struct EmbeddingBagSpec {
  enum class Mode { kSum = 0, kMean = 1, kMax = 2 };  // ATen's mode codes
  Mode mode = Mode::kSum;
  bool include_last_offset = false;  // offsets has bags + 1 entries, the last = #indices
  int num_inputs = 0;                // ABI inputs the entry expects (at least)
  int weight = -1;                   // ABI input index: [rows, dim] of `dtype`
  int indices = -1;                  // int64 [n], each in [0, rows)
  int offsets = -1;                  // int64 [bags] or [bags + 1], non-decreasing, in [0, n]
  int per_sample_weights = -1;       // [n] of `dtype`, or -1 (sum mode only)
  /// The table's, the per-sample weights' and the output's dtype (torch requires them
  /// alike): float32, or float16 / bfloat16, whose rows are widened to float32 as they
  /// are read and summed in float32, the bag rounded to the dtype once at its store (a
  /// mean: the rounded sum divided by the count and rounded again), as eager's CPU
  /// kernels do for float16 (fbgemm's EmbeddingSpMDM, measured against torch 2.11).
  core::DType dtype = core::DType::kFloat32;
};

/// "sum" / "mean" / "max".
const char* ModeName(EmbeddingBagSpec::Mode mode);

/// The spec when `graph`'s only call is aten._embedding_bag.default (or
/// aten._embedding_bag_forward_only.default) on ABI inputs, its one output being the
/// pooled rows (getitem 0), float32, float16 or bfloat16 weights (and per-sample
/// weights and output of the same), int64 indices and offsets, no padding_idx (forward only); nullopt otherwise (the other families are
/// tried). When the graph has a lookup but is refused, `refusal` (if given) receives
/// why, in words ("padding_idx is not supported").
std::optional<EmbeddingBagSpec> MatchEmbeddingBag(const core::OpGraph& graph, std::string* refusal = nullptr);

}  // namespace kernelevolve::operators::ir
