// Template "triton_rowwise": the rowwise template's [O, R, I] region of the loop IR
// (reductions, norms, softmax over any dim, losses, argmax/argmin, broadcast
// per-channel weights) printed as Triton kernels, for --target triton.
#pragma once

#include <string>
#include <vector>

#include "operators/ir/region.h"
#include "operators/template/kernel_template.h"
#include "operators/template/triton_rowwise_kernels.h"

namespace kernelevolve::operators::templates {

/// Knobs of "triton_rowwise" for a region (values outside the region's reach are
/// left out, e.g. blocks wider than the padded extent):
///   layout: I > 1 {"columns"}; one row (O*I == 1) {"split"}; else {"rows", "split"};
///   pass {"single" (all of r in one block, the input read once), "looped" (sweeps
///     over r in blocks of block_r, one per stage)} (rows / columns; "single" only
///     when the padded r fits kTritonMaxTile);
///   block_rows {1, 2, ..., 64} rows per program (rows + single);
///   block_i {16, 32, 64, 128} (columns);
///   block_r {512, 1024, 2048, 4096} (rows + looped) or {4, 8, 16, 32, 64}
///     (columns + looped);
///   programs_per_row {4, 16, 64, 256, 1024} and split_block {1024, 2048, 4096} (split);
///   num_warps {1, 2, 4, 8, 16}; num_stages {1, 2, 3} (looped: tl.range pipelining);
///   accumulator {"float32", "float64"} (only when a sum or product is reduced; float64
///     is the safe value, as the CPU template's).
KnobSpace TritonRowwiseKnobSpace(const ir::Region& region);

class TritonRowwiseTemplate : public KernelTemplate {
 public:
  /// `region` must have a Triton spelling for every op (MatchTritonRowwise checks).
  explicit TritonRowwiseTemplate(ir::Region region);
  std::string Name() const override { return "triton_rowwise"; }
  const KnobSpace& Space() const override { return space_; }
  /// GPU defaults first (float32 accumulators; split rows when there are too few
  /// rows to fill an H200's 132 SMs; i blocks leaving two programs per SM), then
  /// other tilings, then the float64 twin of the first.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  /// A Python module: the @triton.jit kernels and kernelevolve_entry(inputs, outputs).
  std::string Generate(const nlohmann::json& knobs) const override;

  /// The generator settings of a canonical setting.
  TritonRowwiseSettings Settings(const nlohmann::json& knobs) const;

 private:
  ir::Region region_;
  KnobSpace space_;
};

/// The triton_rowwise template for a captured graph (ir::Lower, ir::AnalyzeRegion,
/// then every op's Triton spelling), or null with the reason.
TemplateMatch MatchTritonRowwise(const core::OpGraph& graph);

/// MatchTritonRowwise, but when it fails on a graph of elementwise calls only, the
/// `pointwise_reason` (the triton_pointwise refusal) is the one returned.
TemplateMatch MatchTritonRowwiseOr(const core::OpGraph& graph, const std::string& pointwise_reason);

}  // namespace kernelevolve::operators::templates
