#include "operators/families/attention/attention_template.h"

#include <fmt/format.h>

namespace kernelevolve::operators::families {
namespace {

using templates::KnobDim;
using templates::KnobSpace;

KnobSpace AttentionKnobSpace(bool multithread) {
  std::vector<KnobDim> dims;
  dims.push_back(templates::ThreadsKnob(multithread));
  dims.push_back({"block_m", {32, 16, 64, 8}, 32, nullptr, nullptr, "", nullptr, "{} query rows a block"});
  dims.push_back({"block_n", {64, 128, 32, 256}, 64, nullptr, nullptr, "", nullptr, "{} keys a block"});
  return KnobSpace(std::move(dims));
}

}  // namespace

AttentionTemplate::AttentionTemplate(ir::AttentionSpec spec, bool multithread, int vector_lanes)
    : SpecTemplate(spec, AttentionKnobSpace(multithread)), multithread_(multithread),
      lanes_(vector_lanes > 0 ? vector_lanes : 8) {}

std::vector<nlohmann::json> AttentionTemplate::Drafts() const {
  std::vector<nlohmann::json> drafts = {{{"threads", "1"}}};
  if (multithread_) {
    drafts.push_back({{"threads", "all"}});
    drafts.push_back({{"threads", "all"}, {"block_m", 64}, {"block_n", 128}});
  } else {
    drafts.push_back({{"block_m", 64}, {"block_n", 128}});
  }
  for (auto& d : drafts) d = space_.Canonical(d);
  return drafts;
}

std::string AttentionTemplate::Summary(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  return fmt::format("{}, {} query rows x {} keys a block", k.at("threads") == "all" ? "all threads" : "1 thread",
                     k.at("block_m").get<int>(), k.at("block_n").get<int>());
}

std::string AttentionTemplate::Generate(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  codegen::AttentionSchedule schedule;
  schedule.threads_all = k.at("threads") == "all";
  schedule.block_m = k.at("block_m").get<int>();
  schedule.block_n = k.at("block_n").get<int>();
  schedule.lanes = lanes_;
  const std::string scale = spec_.scale ? fmt::format("{:g}", *spec_.scale) : "1/sqrt(E)";
  const std::string mask = ir::MaskText(spec_);
  const std::string what = fmt::format(
      "scaled dot-product attention{}{}, scale {}: y = softmax(scale q k^T + mask) v, fused with an\n"
      "online softmax (the scores are never stored); sizes read from the tensors at run time.",
      spec_.causal ? ", causal" : "", mask, scale);
  return codegen::PrintAttentionCpp(spec_, schedule, templates::GeneratedHeader(Name(), what, k, ""));
}

std::optional<templates::TemplateMatch> MatchAttention(const core::OpGraph& graph, bool multithread, int vector_lanes) {
  std::optional<ir::AttentionSpec> spec = ir::MatchAttention(graph);
  if (!spec) return std::nullopt;
  return templates::TemplateMatch{std::make_unique<AttentionTemplate>(*spec, multithread, vector_lanes), ""};
}

}  // namespace kernelevolve::operators::families
