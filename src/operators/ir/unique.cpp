#include "operators/ir/unique.h"

#include "operators/ir/graph_match.h"

namespace kernelevolve::operators::ir {

const char* UniqueOutputName(UniqueOutput o) {
  switch (o) {
    case UniqueOutput::kValues: return "unique";
    case UniqueOutput::kInverse: return "inverse";
    case UniqueOutput::kCounts: return "counts";
  }
  return "?";
}

std::optional<UniqueSpec> MatchUnique(const core::OpGraph& graph) {
  const core::OpNode* call = LoneCall(graph, {"aten._unique2.default"});
  const core::OpNode* input = call != nullptr ? InputOperand(graph, *call, "self") : nullptr;
  if (input == nullptr) return std::nullopt;
  UniqueSpec spec;
  spec.dtype = input->dtype;
  if (spec.dtype != core::DType::kFloat32 && spec.dtype != core::DType::kInt64) return std::nullopt;
  spec.input = input->abi_index;
  spec.num_inputs = input->abi_index + 1;
  spec.rank = static_cast<int>(input->shape.size());
  // sorted=False leaves the order to the implementation (torch.unique's docs).
  const auto sorted = ConstBool(*call, "sorted", true);
  const auto inverse = ConstBool(*call, "return_inverse", false);
  const auto counts = ConstBool(*call, "return_counts", false);
  if (!sorted || !*sorted || !inverse || !counts) return std::nullopt;
  for (const std::string& name : graph.outputs) {
    const int which = ResultIndex(graph, name, *call);
    // Without its flag, an inverse or counts output is an empty placeholder.
    if (which < 0 || which > 2 || (which == 1 && !*inverse) || (which == 2 && !*counts)) return std::nullopt;
    const auto o = static_cast<UniqueOutput>(which);
    for (UniqueOutput seen : spec.outputs) {
      if (seen == o) return std::nullopt;  // the same output twice
    }
    spec.outputs.push_back(o);
  }
  return spec;
}

}  // namespace kernelevolve::operators::ir
