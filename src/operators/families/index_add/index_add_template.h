// Family "index_add": a graph that accumulates rows of an ABI input into the rows of
// its output, out = self; out[index[i]] += values[i] (torch.index_add along dim 0 and
// index_put with accumulate=True, which is what the Core ATen capture gives for both),
// with self an ABI input or a constant fill (torch.zeros / torch.full), and the index
// either an ABI index tensor (a scatter-add, as a gradient of an embedding table) or
// segment ids repeat_interleave(arange(segments), lengths) (a jagged segment sum), the
// latter optionally divided by the clamped lengths (segment mean). Its kernel reads
// every size from the tensors at run time (codegen/cpp/index_add_cpp.h), so it serves
// problems whose number of values differs between input sets. The loop IR's gather
// form (ir/lower_core_scatter.cpp) covers such ops inside bigger graphs at fixed sizes.
// Memory-bound: each value row is read once. Knobs: threads, rows per chunk,
// accumulator (double, or float32 in the output), and for an index tensor the
// algorithm (direct, or bucketed by output row first).
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/codegen/cpp/index_add_cpp.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class IndexAddTemplate : public templates::SpecTemplate<ir::IndexAddSpec> {
 public:
  IndexAddTemplate(ir::IndexAddSpec spec, bool multithread);

  std::string Name() const override { return "index_add"; }
  /// One thread first (index tensor: direct and bucketed); then all threads, 16 and
  /// 64 rows a chunk (index tensor: direct, then bucketed).
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  bool multithread_;
};

/// The index_add template when ir::MatchIndexAdd accepts `graph`; nullopt otherwise
/// (the other families are tried).
std::optional<templates::TemplateMatch> MatchIndexAdd(const core::OpGraph& graph, bool multithread);

}  // namespace kernelevolve::operators::families
