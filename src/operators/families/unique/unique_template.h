// Family "unique": a graph that is one torch.unique(x, sorted=True) of a float32 or int64
// ABI input (aten._unique2.default, flattened), whose outputs are its distinct values,
// inverse map and/or counts (getitem 0, 1, 2). Their number depends on the data: a
// problem bounds them (OUTPUT_BOUNDS, docs/abi.md) and the kernel writes the actual
// length into the size tensors that follow forward()'s outputs. The kernel reads every
// size from the tensors at run time (codegen/cpp/unique_cpp.h), so inputs of another
// length on every input set work. Knobs: algorithm (comparison sorts, a radix sort, a
// counting table over [min, max]), threads, radix digit width.
#pragma once

#include <optional>

#include "core/op_graph.h"
#include "operators/codegen/cpp/unique_cpp.h"
#include "operators/template/kernel_template.h"

namespace kernelevolve::operators::families {

class UniqueTemplate : public templates::SpecTemplate<ir::UniqueSpec> {
 public:
  UniqueTemplate(ir::UniqueSpec spec, bool multithread);

  std::string Name() const override { return "unique"; }
  /// stable_sort on one thread first; then counting (int64), radix, introsort and
  /// stable_sort on all threads.
  std::vector<nlohmann::json> Drafts() const override;
  std::string Summary(const nlohmann::json& knobs) const override;
  std::string Generate(const nlohmann::json& knobs) const override;

 private:
  bool multithread_;
};

/// The unique template when `graph`'s only call is aten._unique2.default with sorted=True
/// (constant flags) of a float32 or int64 ABI input, and every output is a different one
/// of its distinct values (getitem 0), inverse (1, only with return_inverse) or counts
/// (2, only with return_counts); nullopt otherwise (the other families are tried).
std::optional<templates::TemplateMatch> MatchUnique(const core::OpGraph& graph, bool multithread);

}  // namespace kernelevolve::operators::families
