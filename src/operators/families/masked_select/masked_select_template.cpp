#include "operators/families/masked_select/masked_select_template.h"

#include <fmt/format.h>

#include "operators/codegen/cpp/loop_nest_cpp.h"

namespace kernelevolve::operators::families {
namespace {

using templates::KnobDim;
using templates::KnobSpace;

KnobSpace MaskedSelectKnobSpace(bool multithread) {
  std::vector<KnobDim> dims;
  dims.push_back(templates::ThreadsKnob(multithread));
  return KnobSpace(std::move(dims));
}

}  // namespace

MaskedSelectTemplate::MaskedSelectTemplate(ir::MaskedSelectSpec spec, ir::KernelPlan mask_plan, bool multithread)
    : SpecTemplate(spec, MaskedSelectKnobSpace(multithread)), mask_plan_(std::move(mask_plan)),
      multithread_(multithread) {}

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
  std::optional<ir::MaskedSelectMatch> match = ir::MatchMaskedSelect(graph, shape_graphs);
  if (!match) return std::nullopt;
  if (!match->mask_plan) return templates::TemplateMatch{nullptr, match->unsupported};
  return templates::TemplateMatch{
      std::make_unique<MaskedSelectTemplate>(match->spec, std::move(*match->mask_plan), multithread), ""};
}

}  // namespace kernelevolve::operators::families
