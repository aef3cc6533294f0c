// Family "sort": a graph that is one torch.sort or torch.topk along a dim of a float32
// or int64 ABI input (aten.sort.default, aten.sort.stable, aten.topk.default), whose
// outputs are its values and/or indices. Its kernel reads the sizes from the tensors at
// run time (codegen/cpp/sort_cpp.h), so rows of any length work. The loop IR's
// counting form (ir/lower_core_sort.cpp) covers a sort inside a bigger graph and the
// other targets; this family is the CPU's fast path: O(n log n) comparison sorts, a
// radix sort, and partial selections for top-k. Knobs: algorithm, threads, rows per
// chunk.
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/codegen/cpp/sort_cpp.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class SortTemplate : public templates::SpecTemplate<ir::SortSpec> {
 public:
  SortTemplate(ir::SortSpec spec, bool multithread);

  std::string Name() const override { return "sort"; }
  /// stable_sort (top-k: partial_sort) on one thread first; then every algorithm on
  /// all threads.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  bool multithread_;
};

/// The sort template when `graph`'s only call is a sort or top-k of a float32 or int64
/// ABI input (rank >= 1, a constant k for top-k) and every output is its values
/// (getitem 0) or indices (getitem 1); nullopt otherwise (the other families are
/// tried; the loop nest covers the rest).
std::optional<templates::TemplateMatch> MatchSort(const core::OpGraph& graph, bool multithread);

}  // namespace kernelevolve::operators::families
