// Family "masked_select": a graph whose one output is x[mask] (aten.index.Tensor with one
// bool index tensor over x's leading dims), x an ABI input and the mask computed by any
// graph the loop IR lowers (a comparison, a length mask, a bool input). The output's
// length is the number of true elements, a data-dependent size (a bounded output,
// docs/abi.md). The kernel runs the mask's loop-nest program (sizes read at run time
// where inputs vary, ir/generalize.h) and then compacts the selected rows in order
// (codegen/cpp/masked_select_cpp.h). Memory-bound: each selected row is copied once.
// Knob: threads.
#pragma once

#include <optional>
#include <vector>

#include "core/op_graph.h"
#include "operators/codegen/cpp/masked_select_cpp.h"
#include "operators/ir/kernel_plan.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class MaskedSelectTemplate : public templates::SpecTemplate<ir::MaskedSelectSpec> {
 public:
  MaskedSelectTemplate(ir::MaskedSelectSpec spec, ir::KernelPlan mask_plan, bool multithread);

  std::string Name() const override { return "masked_select"; }
  /// One thread, then all threads.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  ir::KernelPlan mask_plan_;
  bool multithread_;
};

/// The masked_select template when `graph`'s one output is aten.index.Tensor(x, [mask])
/// with x an ABI input and mask a bool tensor of x's leading dims whose graph (the rest
/// of `graph`; with `shape_graphs`, those of the input sets of other sizes) the loop IR
/// lowers; nullopt otherwise (the other families are tried). A mask the loop IR cannot
/// lower gives a match with no template and the lowering's reason.
std::optional<templates::TemplateMatch> MatchMaskedSelect(const core::OpGraph& graph,
                                                          const std::vector<core::OpGraph>& shape_graphs,
                                                          bool multithread);

}  // namespace kernelevolve::operators::families
