// Family "index_add" on --target triton: rows accumulated by index or by segment (the
// spec of ir/index_add.h), printed as Triton kernels (codegen/triton/index_add_triton.h)
// whose sizes are read at run time. Memory-bound: each value row is read once.
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/ir/index_add.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class TritonIndexAddTemplate : public templates::SpecTemplate<ir::IndexAddSpec> {
 public:
  explicit TritonIndexAddTemplate(ir::IndexAddSpec spec);

  std::string Name() const override { return "triton_index_add"; }
  /// 128 columns, 8 rows, 4 warps, double accumulators; then 16 rows and 8 warps; then
  /// 4 rows with float accumulators.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;
};

/// The Triton index_add template when ir::MatchIndexAdd accepts `graph`.
std::optional<templates::TemplateMatch> MatchTritonIndexAdd(const core::OpGraph& graph);

}  // namespace kernelevolve::operators::families
