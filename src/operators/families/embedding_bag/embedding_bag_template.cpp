#include "operators/families/embedding_bag/embedding_bag_template.h"

#include <fmt/format.h>

#include "core/error.h"

namespace kernelevolve::operators::families {
namespace {

using templates::KnobDim;
using templates::KnobSpace;

KnobSpace EmbeddingBagKnobSpace(bool multithread) {
  std::vector<KnobDim> dims;
  dims.push_back(templates::ThreadsKnob(multithread));
  dims.push_back({"block_rows", {16, 64, 4}, 16, nullptr, nullptr, "threads", "all", "{} bags a chunk"});
  dims.push_back({"prefetch", {0, 8, 2, 32}, 0, 0, 8, "", nullptr, "prefetch distance {}"});
  return KnobSpace(std::move(dims));
}

}  // namespace

EmbeddingBagTemplate::EmbeddingBagTemplate(ir::EmbeddingBagSpec spec, bool multithread)
    : SpecTemplate(spec, EmbeddingBagKnobSpace(multithread)), multithread_(multithread) {}

std::vector<nlohmann::json> EmbeddingBagTemplate::Drafts() const {
  std::vector<nlohmann::json> drafts = {{{"threads", "1"}}};
  if (multithread_) {
    drafts.push_back({{"threads", "all"}});
    drafts.push_back({{"threads", "all"}, {"prefetch", 8}});
  } else {
    drafts.push_back({{"prefetch", 8}});
  }
  for (auto& d : drafts) d = space_.Canonical(d);
  return drafts;
}

std::string EmbeddingBagTemplate::Summary(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  std::string text = k.at("threads") == "all" ? fmt::format("all threads, {} bags a chunk", k.at("block_rows").get<int>())
                                              : std::string("1 thread");
  const int prefetch = k.at("prefetch").get<int>();
  return text + (prefetch > 0 ? fmt::format(", prefetch {} indices ahead", prefetch) : ", no prefetch");
}

std::string EmbeddingBagTemplate::Generate(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  codegen::EmbeddingBagSchedule schedule;
  schedule.threads_all = k.at("threads") == "all";
  if (schedule.threads_all) schedule.chunk = k.at("block_rows").get<int>();
  schedule.prefetch = k.at("prefetch").get<int>();
  const std::string what = fmt::format(
      "embedding_bag, mode {}, {}{}{}: out[b] = pooled weight rows of indices[offsets[b] : end of bag b];\n"
      "sizes read from the tensors at run time; returns 5 on an index or offset out of range.",
      ir::ModeName(spec_.mode), core::DTypeName(spec_.dtype), spec_.include_last_offset ? ", offsets include the last" : "",
      spec_.per_sample_weights >= 0 ? ", per-sample weights" : "");
  const std::string header = templates::GeneratedHeader(Name(), what, k, "");
  return codegen::PrintEmbeddingBagCpp(spec_, schedule, header);
}

std::optional<templates::TemplateMatch> MatchEmbeddingBag(const core::OpGraph& graph, bool multithread) {
  std::optional<ir::EmbeddingBagSpec> spec = ir::MatchEmbeddingBag(graph);
  if (!spec) return std::nullopt;
  return templates::TemplateMatch{std::make_unique<EmbeddingBagTemplate>(*spec, multithread), ""};
}

templates::TemplateMatch NoteEmbeddingBagRefusal(const core::OpGraph& graph, templates::TemplateMatch match) {
  if (match.tmpl) return match;
  std::string why;
  if (!ir::MatchEmbeddingBag(graph, &why) && !why.empty()) {
    match.unsupported += " (the embedding_bag family does not take it: " + why + ")";
  }
  return match;
}

}  // namespace kernelevolve::operators::families
