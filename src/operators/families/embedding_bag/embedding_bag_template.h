// Family "embedding_bag": a graph that is one pooled embedding lookup
// (aten._embedding_bag: sum, mean or max; offsets with or without the last offset;
// per-sample weights; empty bags). Its kernel reads every size from the tensors at run
// time (codegen/cpp/embedding_bag_cpp.h), so it serves problems whose numbers of
// indices differ between input sets. Tables of float32, float16 or bfloat16 (a half
// table summed in float32, each bag rounded once). Memory-bound: one weight row read
// per index; the knobs are the ones that matter for a gather (threads, bags per chunk,
// prefetch distance).
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/codegen/cpp/embedding_bag_cpp.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class EmbeddingBagTemplate : public templates::SpecTemplate<ir::EmbeddingBagSpec> {
 public:
  EmbeddingBagTemplate(ir::EmbeddingBagSpec spec, bool multithread);

  std::string Name() const override { return "embedding_bag"; }
  /// 1 thread without prefetch first; then all threads (16 bags a chunk) without and
  /// with a prefetch distance of 8 indices.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  bool multithread_;
};

/// The embedding_bag template when ir::MatchEmbeddingBag accepts `graph`; nullopt
/// otherwise (the other families are tried).
std::optional<templates::TemplateMatch> MatchEmbeddingBag(const core::OpGraph& graph, bool multithread);

/// `match` (a later family's answer for `graph`, CPU or Triton) with, when it found no
/// template and `graph` has a lookup this family refused, the reason appended to its
/// `unsupported` text: "unsupported_op: aten._embedding_bag.default ... (the
/// embedding_bag family does not take it: padding_idx is not supported)".
templates::TemplateMatch NoteEmbeddingBagRefusal(const core::OpGraph& graph, templates::TemplateMatch match);

}  // namespace kernelevolve::operators::families
