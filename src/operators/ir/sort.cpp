#include "operators/ir/sort.h"

#include "operators/ir/graph_match.h"

namespace kernelevolve::operators::ir {

std::optional<SortSpec> MatchSort(const core::OpGraph& graph) {
  const core::OpNode* call = LoneCall(graph, {"aten.sort.default", "aten.sort.stable", "aten.topk.default"});
  const core::OpNode* input = call != nullptr ? InputOperand(graph, *call, "self") : nullptr;
  if (input == nullptr || input->shape.empty()) return std::nullopt;
  SortSpec spec;
  spec.dtype = input->dtype;
  if (spec.dtype != core::DType::kFloat32 && spec.dtype != core::DType::kInt64) return std::nullopt;
  spec.input = input->abi_index;
  spec.num_inputs = input->abi_index + 1;
  spec.rank = static_cast<int>(input->shape.size());
  const bool topk = call->target == "aten.topk.default";
  const auto dim = ConstInt(*call, "dim", -1);
  const auto order = ConstInt(*call, topk ? "largest" : "descending", topk ? 1 : 0);
  if (!dim || !order || *dim < -spec.rank || *dim >= spec.rank) return std::nullopt;
  spec.dim = static_cast<int>(*dim < 0 ? *dim + spec.rank : *dim);
  spec.descending = *order != 0;
  if (topk) {
    const auto k = ConstInt(*call, "k", -1);
    if (!k || *k < 0) return std::nullopt;
    spec.k = *k;
  }
  for (const std::string& name : graph.outputs) {
    const int which = ResultIndex(graph, name, *call);
    if (which != 0 && which != 1) return std::nullopt;
    spec.outputs.push_back(which);
  }
  return spec;
}

}  // namespace kernelevolve::operators::ir
