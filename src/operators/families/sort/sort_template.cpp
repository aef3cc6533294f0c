#include "operators/families/sort/sort_template.h"

#include <fmt/format.h>


namespace kernelevolve::operators::families {
namespace {

using codegen::SortAlgorithm;
using templates::KnobDim;
using templates::KnobSpace;

bool IsTopK(const ir::SortSpec& s) { return s.k >= 0; }

std::vector<SortAlgorithm> Algorithms(const ir::SortSpec& s) {
  if (IsTopK(s)) {
    return {SortAlgorithm::kPartialSort, SortAlgorithm::kInsertion, SortAlgorithm::kNthElement, SortAlgorithm::kRadix};
  }
  return {SortAlgorithm::kStableSort, SortAlgorithm::kIntroSort, SortAlgorithm::kRadix};
}

KnobSpace SortKnobSpace(const ir::SortSpec& s, bool multithread) {
  std::vector<nlohmann::json> names;
  for (SortAlgorithm a : Algorithms(s)) names.emplace_back(codegen::SortAlgorithmName(a));
  std::vector<KnobDim> dims;
  dims.push_back({"algorithm", names, names.front(), names.front(), nullptr, "", nullptr, "{}"});
  dims.push_back(templates::ThreadsKnob(multithread));
  dims.push_back({"block_rows", {4, 1, 16}, 4, nullptr, nullptr, "threads", "all", "{} rows a chunk"});
  return KnobSpace(std::move(dims));
}

SortAlgorithm AlgorithmNamed(const std::string& name) {
  for (SortAlgorithm a : {SortAlgorithm::kStableSort, SortAlgorithm::kIntroSort, SortAlgorithm::kRadix,
                          SortAlgorithm::kPartialSort, SortAlgorithm::kNthElement, SortAlgorithm::kInsertion}) {
    if (name == codegen::SortAlgorithmName(a)) return a;
  }
  return SortAlgorithm::kStableSort;  // unreachable: Canonical() checked the value
}

}  // namespace

SortTemplate::SortTemplate(ir::SortSpec spec, bool multithread)
    : SpecTemplate(spec, SortKnobSpace(spec, multithread)), multithread_(multithread) {}

std::vector<nlohmann::json> SortTemplate::Drafts() const {
  std::vector<nlohmann::json> drafts;
  const auto algorithms = Algorithms(spec_);
  drafts.push_back({{"algorithm", codegen::SortAlgorithmName(algorithms.front())}, {"threads", "1"}});
  for (SortAlgorithm a : algorithms) {
    drafts.push_back({{"algorithm", codegen::SortAlgorithmName(a)}, {"threads", multithread_ ? "all" : "1"}});
  }
  for (auto& d : drafts) d = space_.Canonical(d);
  return drafts;
}

std::string SortTemplate::Summary(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  const std::string threads =
      k.at("threads") == "all" ? fmt::format("all threads, {} rows a chunk", k.at("block_rows").get<int>()) : "1 thread";
  return fmt::format("{}, {}", k.at("algorithm").get<std::string>(), threads);
}

std::string SortTemplate::Generate(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  codegen::SortSchedule schedule;
  schedule.algorithm = AlgorithmNamed(k.at("algorithm").get<std::string>());
  schedule.threads_all = k.at("threads") == "all";
  if (schedule.threads_all) schedule.chunk = k.at("block_rows").get<int>();
  const std::string order = spec_.descending ? "descending (NaN first)" : "ascending (NaN last)";
  const std::string what =
      (IsTopK(spec_) ? fmt::format("topk, k = {}, along dim {}, {}", spec_.k, spec_.dim, order)
                     : fmt::format("sort along dim {}, {}", spec_.dim, order)) +
      ", equal values in input order (stable);\nsizes read from the tensor at run time.";
  return codegen::PrintSortCpp(spec_, schedule, templates::GeneratedHeader(Name(), what, k, ""));
}

std::optional<templates::TemplateMatch> MatchSort(const core::OpGraph& graph, bool multithread) {
  std::optional<ir::SortSpec> spec = ir::MatchSort(graph);
  if (!spec) return std::nullopt;
  return templates::TemplateMatch{std::make_unique<SortTemplate>(std::move(*spec), multithread), ""};
}

}  // namespace kernelevolve::operators::families
