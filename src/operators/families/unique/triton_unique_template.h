// Family "unique" on --target triton: torch.unique(x, sorted=True) of an int64 tensor (the
// spec of ir/unique.h) by a counting table (codegen/triton/unique_triton.h). Float32
// inputs have no Triton kernel here (the matcher declines; the loop nest reports the op).
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/ir/unique.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class TritonUniqueTemplate : public templates::SpecTemplate<ir::UniqueSpec> {
 public:
  explicit TritonUniqueTemplate(ir::UniqueSpec spec);

  std::string Name() const override { return "triton_unique"; }
  /// 1024 elements a program, 4 warps; then 4096 and 8 warps; then 256.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;
};

/// The Triton unique template when ir::MatchUnique accepts `graph` with an int64 input.
std::optional<templates::TemplateMatch> MatchTritonUnique(const core::OpGraph& graph);

}  // namespace kernelevolve::operators::families
