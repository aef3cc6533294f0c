#include "operators/families/unique/unique_template.h"

#include <fmt/format.h>


namespace kernelevolve::operators::families {
namespace {

using codegen::UniqueAlgorithm;
using ir::UniqueOutput;
using templates::KnobDim;
using templates::KnobSpace;

bool IsFloat(const ir::UniqueSpec& s) { return s.dtype == core::DType::kFloat32; }

/// Counting needs integer values (a table slot per value of [min, max]).
std::vector<UniqueAlgorithm> Algorithms(const ir::UniqueSpec& s) {
  if (IsFloat(s)) return {UniqueAlgorithm::kStableSort, UniqueAlgorithm::kIntroSort, UniqueAlgorithm::kRadix};
  return {UniqueAlgorithm::kStableSort, UniqueAlgorithm::kIntroSort, UniqueAlgorithm::kRadix,
          UniqueAlgorithm::kCounting};
}

KnobSpace UniqueKnobSpace(const ir::UniqueSpec& s, bool multithread) {
  std::vector<nlohmann::json> names;
  for (UniqueAlgorithm a : Algorithms(s)) names.emplace_back(codegen::UniqueAlgorithmName(a));
  std::vector<KnobDim> dims;
  dims.push_back({"algorithm", names, names.front(), names.front(), nullptr, "", nullptr, "{}"});
  dims.push_back(templates::ThreadsKnob(multithread));
  dims.push_back({"digit_bits", {8, 11}, 8, nullptr, nullptr, "algorithm", "radix", "{}-bit digits"});
  return KnobSpace(std::move(dims));
}

UniqueAlgorithm AlgorithmNamed(const std::string& name) {
  for (UniqueAlgorithm a : {UniqueAlgorithm::kStableSort, UniqueAlgorithm::kIntroSort, UniqueAlgorithm::kRadix,
                            UniqueAlgorithm::kCounting}) {
    if (name == codegen::UniqueAlgorithmName(a)) return a;
  }
  return UniqueAlgorithm::kStableSort;  // unreachable: Canonical() checked the value
}


}  // namespace

UniqueTemplate::UniqueTemplate(ir::UniqueSpec spec, bool multithread)
    : SpecTemplate(spec, UniqueKnobSpace(spec, multithread)), multithread_(multithread) {}

std::vector<nlohmann::json> UniqueTemplate::Drafts() const {
  std::vector<nlohmann::json> drafts;
  const auto algorithms = Algorithms(spec_);
  drafts.push_back({{"algorithm", codegen::UniqueAlgorithmName(algorithms.front())}, {"threads", "1"}});
  // The ones that skip the comparison sort first: counting (int64), radix.
  for (auto a = algorithms.rbegin(); a != algorithms.rend(); ++a) {
    drafts.push_back({{"algorithm", codegen::UniqueAlgorithmName(*a)}, {"threads", multithread_ ? "all" : "1"}});
  }
  for (auto& d : drafts) d = space_.Canonical(d);
  return drafts;
}

std::string UniqueTemplate::Summary(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  std::string out = k.at("algorithm").get<std::string>();
  if (k.contains("digit_bits")) out += fmt::format(", {}-bit digits", k.at("digit_bits").get<int>());
  return out + (k.at("threads") == "all" ? ", all threads" : ", 1 thread");
}

std::string UniqueTemplate::Generate(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  codegen::UniqueSchedule schedule;
  schedule.algorithm = AlgorithmNamed(k.at("algorithm").get<std::string>());
  schedule.threads_all = k.at("threads") == "all";
  if (k.contains("digit_bits")) schedule.digit_bits = k.at("digit_bits").get<int>();
  std::string outputs;
  for (UniqueOutput o : spec_.outputs) outputs += (outputs.empty() ? "" : ", ") + std::string(ir::UniqueOutputName(o));
  const std::string what = fmt::format(
      "torch.unique(sorted=True) of a {} tensor of rank {} (flattened): {};\n"
      "sizes read from the tensors at run time.",
      IsFloat(spec_) ? "float32" : "int64", spec_.rank, outputs);
  const std::string abi =
      "//   outputs: forward()'s, then with OUTPUT_BOUNDS one int64 [1] size tensor per unique /\n"
      "//   counts output (docs/abi.md); the distinct values go dense into the prefix.\n"
      "// Also returns 5 when a bound holds fewer than the distinct values, 6 when scratch\n"
      "// memory cannot be allocated.\n";
  return codegen::PrintUniqueCpp(spec_, schedule, templates::GeneratedHeader(Name(), what, k, abi));
}

std::optional<templates::TemplateMatch> MatchUnique(const core::OpGraph& graph, bool multithread) {
  std::optional<ir::UniqueSpec> spec = ir::MatchUnique(graph);
  if (!spec) return std::nullopt;
  return templates::TemplateMatch{std::make_unique<UniqueTemplate>(std::move(*spec), multithread), ""};
}

}  // namespace kernelevolve::operators::families
