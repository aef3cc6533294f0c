// Family "sort" on --target triton: torch.sort / torch.topk of a float32 tensor along one
// dim (the spec of ir/sort.h), one program sorting one row in registers
// (codegen/triton/sort_triton.h). int64 inputs and rows longer than
// codegen::kTritonSortMaxRow (as captured) are left to the loop nest.
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/ir/sort.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class TritonSortTemplate : public templates::SpecTemplate<ir::SortSpec> {
 public:
  explicit TritonSortTemplate(ir::SortSpec spec);

  std::string Name() const override { return "triton_sort"; }
  /// 8 warps; then 4; then 16.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;
};

/// The Triton sort template when ir::MatchSort accepts `graph` with a float32 input whose
/// sorted dim has at most codegen::kTritonSortMaxRow elements.
std::optional<templates::TemplateMatch> MatchTritonSort(const core::OpGraph& graph);

}  // namespace kernelevolve::operators::families
