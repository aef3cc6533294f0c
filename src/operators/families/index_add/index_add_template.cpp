#include "operators/families/index_add/index_add_template.h"

#include <fmt/format.h>


namespace kernelevolve::operators::families {
namespace {

using templates::KnobDim;
using templates::KnobSpace;

KnobSpace IndexAddKnobSpace(const ir::IndexAddSpec& s, bool multithread) {
  std::vector<KnobDim> dims;
  dims.push_back(templates::ThreadsKnob(multithread));
  if (!s.segments) {
    dims.push_back({"algorithm", {"direct", "bucket"}, "direct", nullptr, nullptr, "", nullptr, "{}"});
  }
  dims.push_back({"block_rows", {16, 64, 4}, 16, nullptr, nullptr, "threads", "all", "{} rows a chunk"});
  dims.push_back({"accumulator", {"float64", "float32"}, "float64", "float64", nullptr, "", nullptr, "{} accumulator"});
  return KnobSpace(std::move(dims));
}

}  // namespace

IndexAddTemplate::IndexAddTemplate(ir::IndexAddSpec spec, bool multithread)
    : SpecTemplate(spec, IndexAddKnobSpace(spec, multithread)), multithread_(multithread) {}

std::vector<nlohmann::json> IndexAddTemplate::Drafts() const {
  std::vector<nlohmann::json> drafts = {{{"threads", "1"}}};
  if (!spec_.segments) drafts.push_back({{"threads", "1"}, {"algorithm", "bucket"}});
  if (multithread_) {
    drafts.push_back({{"threads", "all"}});
    drafts.push_back({{"threads", "all"}, {"block_rows", 64}});
    if (!spec_.segments) drafts.back()["algorithm"] = "bucket";
  }
  for (auto& d : drafts) d = space_.Canonical(d);
  return drafts;
}

std::string IndexAddTemplate::Summary(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  const bool bucket = !spec_.segments && k.at("algorithm") == "bucket";
  const std::string how = spec_.segments ? "" : bucket ? "rows bucketed by a counting sort, " : "direct, ";
  const std::string acc = fmt::format(", {} accumulator", k.at("accumulator").get<std::string>());
  if (k.at("threads") != "all") return how + "1 thread" + acc;
  return how + (spec_.segments || bucket ? fmt::format("all threads, {} rows a chunk", k.at("block_rows").get<int>())
                                         : std::string("all threads, each owning a range of output rows")) + acc;
}

std::string IndexAddTemplate::Generate(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  codegen::IndexAddSchedule schedule;
  schedule.threads_all = k.at("threads") == "all";
  schedule.bucket = !spec_.segments && k.at("algorithm") == "bucket";
  if (schedule.threads_all) schedule.chunk = k.at("block_rows").get<int>();
  schedule.double_accumulator = k.at("accumulator") == "float64";
  const std::string self = spec_.self_is_input ? "self" : fmt::format("full({})", spec_.fill);
  const std::string scale = spec_.scaled ? fmt::format("{} * ", spec_.alpha) : "";
  const std::string what =
      spec_.segments
          ? fmt::format("segment {}: out[b] = {}[b] + {}values[offset_b : offset_b + lengths[b]] summed{};\n",
                        spec_.mean ? "mean" : "sum", self, scale, spec_.mean ? ", / max(lengths[b], 1)" : "")
          : fmt::format("index_add along dim 0: out = {}; out[index[i]] += {}values[i], in order of i;\n", self,
                        scale);
  return codegen::PrintIndexAddCpp(
      spec_, schedule,
      templates::GeneratedHeader(Name(), what + "sizes read from the tensors at run time; returns 5 on an index "
                                                "or lengths out of range.", k, ""));
}

std::optional<templates::TemplateMatch> MatchIndexAdd(const core::OpGraph& graph, bool multithread) {
  std::optional<ir::IndexAddSpec> spec = ir::MatchIndexAdd(graph);
  if (!spec) return std::nullopt;
  return templates::TemplateMatch{std::make_unique<IndexAddTemplate>(*spec, multithread), ""};
}

}  // namespace kernelevolve::operators::families
