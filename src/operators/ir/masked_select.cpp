#include "operators/ir/masked_select.h"

#include <algorithm>

#include "operators/ir/generalize.h"

namespace kernelevolve::operators::ir {
namespace {

/// The x[mask] node of `graph` (its one output) and its mask's name, or nullptr.
const core::OpNode* SelectNode(const core::OpGraph& graph, std::string* mask_name) {
  if (graph.outputs.size() != 1) return nullptr;
  const core::OpNode* out = graph.Find(graph.outputs[0]);
  if (out == nullptr || out->target != "aten.index.Tensor") return nullptr;
  const core::OpArg* indices = out->Arg("indices");
  if (indices == nullptr || !indices->value.is_array() || indices->value.size() != 1 ||
      !indices->value[0].is_object() || !indices->value[0].contains("ref")) {
    return nullptr;
  }
  *mask_name = indices->value[0]["ref"].get<std::string>();
  return out;
}

/// `graph` with x[mask] removed and the mask as its one output.
core::OpGraph MaskGraph(const core::OpGraph& graph, const std::string& select, const std::string& mask) {
  core::OpGraph out;
  for (const core::OpNode& n : graph.nodes) {
    if (n.name != select) out.nodes.push_back(n);
  }
  out.outputs = {mask};
  return out;
}

}  // namespace

std::optional<MaskedSelectMatch> MatchMaskedSelect(const core::OpGraph& graph,
                                                   const std::vector<core::OpGraph>& shape_graphs) {
  std::string mask_name;
  const core::OpNode* select = SelectNode(graph, &mask_name);
  if (select == nullptr) return std::nullopt;
  const core::OpArg* self_arg = select->Arg("self");
  const core::OpNode* self = self_arg != nullptr && self_arg->IsRef() ? graph.Find(self_arg->ref) : nullptr;
  const core::OpNode* mask = graph.Find(mask_name);
  if (self == nullptr || self->kind == core::OpNodeKind::kCall || mask == nullptr ||
      (mask->dtype != core::DType::kBool && mask->dtype != core::DType::kUInt8) || mask->shape.empty() ||
      mask->shape.size() > self->shape.size() ||
      !std::equal(mask->shape.begin(), mask->shape.end(), self->shape.begin())) {
    return std::nullopt;
  }
  MaskedSelectMatch match;
  // The mask's program, its sizes read at run time where the inputs vary.
  std::vector<core::OpGraph> other_masks;
  for (const core::OpGraph& g : shape_graphs) {
    std::string other_mask;
    const core::OpNode* other = SelectNode(g, &other_mask);
    if (other == nullptr) {
      match.unsupported = "unsupported_graph: the input sets give other graphs";
      return match;
    }
    other_masks.push_back(MaskGraph(g, other->name, other_mask));
  }
  GeneralizeResult general = LowerGeneralized(MaskGraph(graph, select->name, mask_name), other_masks);
  if (!general.program) {
    match.unsupported = general.unsupported;
    return match;
  }
  match.spec.self = self->abi_index;
  match.spec.rank = static_cast<int>(self->shape.size());
  match.spec.mask_rank = static_cast<int>(mask->shape.size());
  match.spec.num_inputs = self->abi_index + 1;
  for (const TensorDef& d : general.program->defs) {
    if (d.kind == DefKind::kInput) match.spec.num_inputs = std::max(match.spec.num_inputs, d.abi_index + 1);
  }
  match.mask_plan = PlanKernels(std::move(*general.program));
  return match;
}

}  // namespace kernelevolve::operators::ir
