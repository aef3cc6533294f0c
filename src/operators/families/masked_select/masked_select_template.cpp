#include "operators/families/masked_select/masked_select_template.h"

#include <fmt/format.h>

#include "operators/codegen/cpp/loop_nest_cpp.h"
#include "operators/ir/generalize.h"

namespace kernelevolve::operators::families {
namespace {

using templates::KnobDim;
using templates::KnobSpace;

KnobSpace MaskedSelectKnobSpace(bool multithread) {
  std::vector<KnobDim> dims;
  dims.push_back(templates::ThreadsKnob(multithread));
  return KnobSpace(std::move(dims));
}

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

MaskedSelectTemplate::MaskedSelectTemplate(codegen::MaskedSelectSpec spec, ir::KernelPlan mask_plan, bool multithread)
    : spec_(spec), mask_plan_(std::move(mask_plan)), multithread_(multithread),
      space_(MaskedSelectKnobSpace(multithread)) {}

std::vector<nlohmann::json> MaskedSelectTemplate::Drafts() const {
  std::vector<nlohmann::json> drafts = {{{"threads", "1"}}};
  if (multithread_) drafts.push_back({{"threads", "all"}});
  for (auto& d : drafts) d = space_.Canonical(d);
  return drafts;
}

std::string MaskedSelectTemplate::Summary(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  return k.at("threads") == "all" ? "all threads: the mask, then count and copy per block of rows" : "1 thread";
}

std::string MaskedSelectTemplate::Generate(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  codegen::MaskedSelectSchedule schedule;
  schedule.threads_all = k.at("threads") == "all";
  codegen::LoopNestSchedule mask_schedule;
  mask_schedule.parallel = schedule.threads_all;
  std::string what = fmt::format(
      "x[mask]: the rows of input {} (its first {} dim(s)) where the mask is true, in order; the mask\n"
      "from a loop-nest program of {} kernel(s) (ke_mask, {}); the compaction reads its sizes at run time.",
      spec_.self, spec_.mask_rank, mask_plan_.kernels.size(),
      mask_plan_.program.symbols.empty() ? "at the captured sizes" : "sizes read at run time");
  return codegen::PrintMaskedSelectCpp(spec_, schedule, templates::GeneratedHeader(Name(), what, k, ""),
                                       codegen::PrintLoopNestCpp(mask_plan_, mask_schedule, "ke_mask"));
}

std::optional<templates::TemplateMatch> MatchMaskedSelect(const core::OpGraph& graph,
                                                          const std::vector<core::OpGraph>& shape_graphs,
                                                          bool multithread) {
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
  // The mask's program, its sizes read at run time where the inputs vary.
  std::vector<core::OpGraph> other_masks;
  for (const core::OpGraph& g : shape_graphs) {
    std::string other_mask;
    const core::OpNode* other = SelectNode(g, &other_mask);
    if (other == nullptr) return templates::TemplateMatch{nullptr, "unsupported_graph: the input sets give other graphs"};
    other_masks.push_back(MaskGraph(g, other->name, other_mask));
  }
  ir::GeneralizeResult general = ir::LowerGeneralized(MaskGraph(graph, select->name, mask_name), other_masks);
  if (!general.program) return templates::TemplateMatch{nullptr, general.unsupported};
  codegen::MaskedSelectSpec spec;
  spec.self = self->abi_index;
  spec.rank = static_cast<int>(self->shape.size());
  spec.mask_rank = static_cast<int>(mask->shape.size());
  spec.num_inputs = self->abi_index + 1;
  for (const ir::TensorDef& d : general.program->defs) {
    if (d.kind == ir::DefKind::kInput) spec.num_inputs = std::max(spec.num_inputs, d.abi_index + 1);
  }
  return templates::TemplateMatch{
      std::make_unique<MaskedSelectTemplate>(spec, ir::PlanKernels(std::move(*general.program)), multithread), ""};
}

}  // namespace kernelevolve::operators::families
