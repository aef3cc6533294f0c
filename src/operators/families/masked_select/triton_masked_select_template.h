// Family "masked_select" on --target triton: x[mask] (the spec and mask program of
// ir/masked_select.h), printed as the mask's Triton loop-nest program followed by a
// stream compaction (codegen/triton/masked_select_triton.h). Sizes are read at run time.
// Memory-bound: each selected row is copied once.
#pragma once

#include <optional>
#include <vector>

#include "core/op_graph.h"
#include "operators/ir/masked_select.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class TritonMaskedSelectTemplate : public templates::SpecTemplate<ir::MaskedSelectSpec> {
 public:
  TritonMaskedSelectTemplate(ir::MaskedSelectSpec spec, ir::KernelPlan mask_plan);

  std::string Name() const override { return "triton_masked_select"; }
  /// 1024 rows a program, 4 warps; then 256 rows; then 4096 rows and 8 warps.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  ir::KernelPlan mask_plan_;
};

/// The Triton masked_select template when ir::MatchMaskedSelect accepts `graph`; a
/// match with no template and the reason when the mask cannot be lowered.
std::optional<templates::TemplateMatch> MatchTritonMaskedSelect(const core::OpGraph& graph,
                                                                const std::vector<core::OpGraph>& shape_graphs);

}  // namespace kernelevolve::operators::families
