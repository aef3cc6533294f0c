// Template "triton_softmax_lastdim": softmax / log_softmax over the last dim in
// Triton, for --target triton. Also the target dispatch of template matching.
#pragma once

#include <string>

#include "core/problem.h"
#include "operators/template/kernel_template.h"
#include "operators/template/softmax_template.h"

namespace kernelevolve::operators::templates {

/// Widest row (elements) the "row" variant keeps in registers in one block;
/// wider rows use the "online" variant only.
inline constexpr int64_t kTritonMaxRowBlock = 16384;

/// Knobs: algorithm {"row" (the whole row in one block, one program per row),
/// "online" (running max and rescaled sum over block_r-wide chunks, Milakov &
/// Gimelshein 2018, then a normalize pass)} ("row" only when cols <=
/// kTritonMaxRowBlock); num_warps {4, 8, 16}; persistent {"no", "yes"} (row only:
/// a grid of a few programs per SM looping over rows); num_stages {1, 2, 3}
/// (persistent only: software pipelining of the row loop); block_r {1024, 2048,
/// 4096} (online only).
KnobSpace TritonSoftmaxKnobSpace(bool row_fits);

class TritonSoftmaxTemplate : public KernelTemplate {
 public:
  explicit TritonSoftmaxTemplate(SoftmaxSpec spec);
  std::string Name() const override { return "triton_softmax_lastdim"; }
  const KnobSpace& Space() const override { return space_; }
  /// Row: {8 warps}, {persistent, 8 warps, 2 stages}, {16 warps}; online: {4096, 8 warps}.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  /// A Python module: the @triton.jit kernel(s) and kernelevolve_entry(inputs, outputs).
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  SoftmaxSpec spec_;
  KnobSpace space_;
};

/// The Triton template for a problem, first match wins: triton_softmax_lastdim for a
/// lone last-dim softmax / log_softmax; triton_matmul; triton_scan for a graph with a
/// cumulative op (its reason when refused); triton_pointwise for a same-shape
/// elementwise graph; triton_rowwise for reductions, norms, losses, softmax over
/// other dims and broadcasting. Otherwise null with the reason (MatchTritonRowwiseOr).
TemplateMatch MatchTritonTemplate(const core::Problem& problem);

/// Template matching by --target: "cpu" -> MatchTemplate(problem, threads),
/// "triton" -> MatchTritonTemplate(problem), "cuda" -> MatchCudaTemplate(problem)
/// (cuda_reduction.h); any other target -> no template, with
/// "unsupported_target: NAME (templates exist for cpu, triton and cuda)". A problem
/// whose graph the loader left empty with an "unsupported_dtype: ..." graph_error
/// (core::FirstUnsupportedDType) gets that reason for every target.
TemplateMatch MatchTemplateForTarget(const std::string& target, const core::Problem& problem, int threads,
                                     int vector_lanes = 8);

}  // namespace kernelevolve::operators::templates
