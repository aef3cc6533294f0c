// Family "attention": a graph that is one scaled dot-product attention
// (F.scaled_dot_product_attention on float32 [B, H, L, E] inputs: scale, causal, a
// boolean or additive float mask; ir/attention.h), printed as one fused kernel with an
// online softmax (codegen/cpp/attention_cpp.h): the [L, S] scores are never stored.
// Compute-bound for long sequences (4 B H L S E FLOPs), so the knobs are the blocking:
// query rows per block (K^T packed once per block is reused by that many rows), keys per
// block (the score row is a vector loop over them), threads.
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/codegen/cpp/attention_cpp.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class AttentionTemplate : public templates::SpecTemplate<ir::AttentionSpec> {
 public:
  /// `vector_lanes`: float32 lanes of the machine's vectors (0: 8).
  AttentionTemplate(ir::AttentionSpec spec, bool multithread, int vector_lanes);

  std::string Name() const override { return "attention"; }
  /// One thread with 32 x 64 blocks first; then all threads with 32 x 64 and 64 x 128.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  bool multithread_;
  int lanes_;
};

/// The attention template when ir::MatchAttention accepts `graph`; nullopt otherwise
/// (the loop nest lowers the same node into kernels).
std::optional<templates::TemplateMatch> MatchAttention(const core::OpGraph& graph, bool multithread, int vector_lanes);

}  // namespace kernelevolve::operators::families
