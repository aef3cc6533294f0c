// Family "embedding_bag" on --target triton: one pooled embedding lookup (the spec of
// ir/embedding_bag.h), printed as one Triton kernel (codegen/triton/embedding_bag_triton.h)
// whose sizes are read at run time. Memory-bound: one weight row (dim x 4 bytes) read
// per index; the knobs are the ones that matter for a gather on a GPU (columns per
// program, indices gathered per step, bags per program, warps).
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/ir/embedding_bag.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class TritonEmbeddingBagTemplate : public templates::SpecTemplate<ir::EmbeddingBagSpec> {
 public:
  explicit TritonEmbeddingBagTemplate(ir::EmbeddingBagSpec spec);

  std::string Name() const override { return "triton_embedding_bag"; }
  /// 8 indices a step, 128 columns, 4 warps; then 16 indices with 2 bags a program;
  /// then 4 indices with 2 warps.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;
};

/// The Triton embedding_bag template when ir::MatchEmbeddingBag accepts `graph`.
std::optional<templates::TemplateMatch> MatchTritonEmbeddingBag(const core::OpGraph& graph);

}  // namespace kernelevolve::operators::families
