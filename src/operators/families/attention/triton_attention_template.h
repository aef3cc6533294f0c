// Family "attention" on --target triton: a graph that is one scaled dot-product
// attention (the spec of ir/attention.h, matched once for both targets), printed as
// one fused Triton kernel with an online softmax (codegen/triton/attention_triton.h).
// Knobs: query rows a program, keys a step, warps, pipeline stages, the products'
// precision and where 3xTF32 splits its operands.
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/ir/attention.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class TritonAttentionTemplate : public templates::SpecTemplate<ir::AttentionSpec> {
 public:
  explicit TritonAttentionTemplate(ir::AttentionSpec spec);

  std::string Name() const override { return "triton_attention"; }
  /// 3xTF32 on 128 query rows, 8 warps, 3 stages and 32 keys a step (64 for a head of
  /// at most 64), its operands split by the kernel, then by Triton (for a head over 128:
  /// 64 x 32 with 4 warps and one stage, Triton's split first); then the IEEE tiles:
  /// 64 x 64 with 4 warps and 2 stages, 128 x 64 with 8 warps, 64 x 32.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;
};

/// The Triton attention template when ir::MatchAttention accepts `graph`.
std::optional<templates::TemplateMatch> MatchTritonAttention(const core::OpGraph& graph);

}  // namespace kernelevolve::operators::families
