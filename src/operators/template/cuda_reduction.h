// Template "cuda_reduction": a loop-IR region with row reductions (sums, means,
// max/min, norms, softmax / log_softmax, layer norm, ...) in CUDA C++, for
// --target cuda. One row (o, i) is reduced by a block, a warp or one thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/problem.h"
#include "operators/ir/region.h"
#include "operators/template/kernel_template.h"
#include "operators/template/softmax_template.h"

namespace kernelevolve::operators::templates {

/// Knobs. I == 1 (reduced dims last): mode {"block" (one block of 32 x num_warps
/// threads per row: warp shuffles then shared memory), "warp" (one warp per row,
/// num_warps rows per block)}; I > 1: mode {"thread"} (one thread per (o, i), coalesced
/// over i). num_warps {4, 8, 16, 32}; accumulator {"float32", "float64"} when the region
/// sums or multiplies; math {"libm", "fast"}; for a lone last-dim softmax / log_softmax,
/// algorithm {"two_pass" (max, then sum of exp, then write: the region's three
/// sweeps), "online" (running max and rescaled sum in one sweep, Milakov &
/// Gimelshein 2018, then write)} with mode block or warp.
KnobSpace CudaReductionKnobSpace(const ir::Region& region, bool softmax);

class CudaReductionTemplate : public SpecTemplate<ir::Region> {
 public:
  /// `region`: analysed, with no tail reductions; `num_inputs`: the problem's ABI
  /// inputs (some may be unused by the graph); `softmax`: set for a lone last-dim
  /// softmax / log_softmax (enables the online algorithm).
  CudaReductionTemplate(ir::Region region, size_t num_inputs, std::optional<SoftmaxSpec> softmax);
  std::string Name() const override { return "cuda_reduction"; }
  /// I == 1: {block, 256}, {warp, 256}, {block, 1024} (softmax: also online); I > 1:
  /// {thread, 256}, {thread, 128}.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  /// A .cu translation unit. Throws InvalidInputError for a setting outside Space().
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  size_t num_inputs_;
  std::optional<SoftmaxSpec> softmax_;
};

/// cuda_reduction for `problem` when its graph lowers to one region without tail
/// reductions (a reduction to a scalar), else why not ("unsupported_graph: ...").
TemplateMatch MatchCudaReduction(const core::Problem& problem);

/// The CUDA template for a problem: cuda_pointwise for same-shape elementwise graphs,
/// else cuda_reduction; or why neither applies (the reduction's reason).
TemplateMatch MatchCudaTemplate(const core::Problem& problem);

}  // namespace kernelevolve::operators::templates
