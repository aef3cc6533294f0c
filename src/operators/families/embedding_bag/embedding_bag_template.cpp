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
  dims.push_back({"chunk", {16, 64, 4}, 16, nullptr, nullptr, "threads", "all", "{} bags a chunk"});
  dims.push_back({"prefetch", {0, 8, 2, 32}, 0, 0, 8, "", nullptr, "prefetch distance {}"});
  return KnobSpace(std::move(dims));
}

/// ABI index of argument `name` of `call` when it refers to a placeholder or parameter;
/// -1 when it is absent or null; -2 when it is computed (the family does not apply).
int AbiInput(const core::OpGraph& graph, const core::OpNode& call, const std::string& name) {
  const core::OpArg* arg = call.Arg(name);
  if (arg == nullptr || !arg->IsRef()) return arg != nullptr && !arg->value.is_null() ? -2 : -1;
  const core::OpNode* node = graph.Find(arg->ref);
  if (node == nullptr || node->kind == core::OpNodeKind::kCall) return -2;
  return node->abi_index;
}

}  // namespace

EmbeddingBagTemplate::EmbeddingBagTemplate(codegen::EmbeddingBagSpec spec, bool multithread)
    : spec_(spec), multithread_(multithread), space_(EmbeddingBagKnobSpace(multithread)) {}

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
  std::string text = k.at("threads") == "all" ? fmt::format("all threads, {} bags a chunk", k.at("chunk").get<int>())
                                              : std::string("1 thread");
  const int prefetch = k.at("prefetch").get<int>();
  return text + (prefetch > 0 ? fmt::format(", prefetch {} indices ahead", prefetch) : ", no prefetch");
}

std::string EmbeddingBagTemplate::Generate(const nlohmann::json& knobs) const {
  const nlohmann::json k = space_.Canonical(knobs);
  codegen::EmbeddingBagSchedule schedule;
  schedule.threads_all = k.at("threads") == "all";
  if (schedule.threads_all) schedule.chunk = k.at("chunk").get<int>();
  schedule.prefetch = k.at("prefetch").get<int>();
  static const char* kModes[] = {"sum", "mean", "max"};
  const std::string what = fmt::format(
      "embedding_bag, mode {}{}{}: out[b] = pooled weight rows of indices[offsets[b] : end of bag b];\n"
      "sizes read from the tensors at run time; returns 5 on an index or offset out of range.",
      kModes[static_cast<int>(spec_.mode)], spec_.include_last_offset ? ", offsets include the last" : "",
      spec_.per_sample_weights >= 0 ? ", per-sample weights" : "");
  const std::string header = templates::GeneratedHeader(Name(), what, k, "");
  return codegen::PrintEmbeddingBagCpp(spec_, schedule, header);
}

std::optional<templates::TemplateMatch> MatchEmbeddingBag(const core::OpGraph& graph, bool multithread) {
  const auto calls = graph.Calls();
  const core::OpNode* bag = nullptr;
  for (const core::OpNode* c : calls) {
    if (c->target == "aten._embedding_bag.default" || c->target == "aten._embedding_bag_forward_only.default") {
      if (bag != nullptr) return std::nullopt;
      bag = c;
    } else if (c->target != "getitem") {
      return std::nullopt;
    }
  }
  if (bag == nullptr || graph.outputs.size() != 1) return std::nullopt;
  const core::OpNode* out = graph.Find(graph.outputs[0]);
  if (out == nullptr || out->target != "getitem" || out->Arg("self") == nullptr || out->Arg("self")->ref != bag->name ||
      out->Arg("index") == nullptr || out->Arg("index")->value != 0 || out->dtype != core::DType::kFloat32) {
    return std::nullopt;
  }
  codegen::EmbeddingBagSpec spec;
  spec.weight = AbiInput(graph, *bag, "weight");
  spec.indices = AbiInput(graph, *bag, "indices");
  spec.offsets = AbiInput(graph, *bag, "offsets");
  spec.per_sample_weights = AbiInput(graph, *bag, "per_sample_weights");
  if (spec.weight < 0 || spec.indices < 0 || spec.offsets < 0 || spec.per_sample_weights == -2) return std::nullopt;
  const core::OpArg* mode = bag->Arg("mode");
  const core::OpArg* last = bag->Arg("include_last_offset");
  const core::OpArg* padding = bag->Arg("padding_idx");
  if (mode == nullptr || !mode->value.is_number_integer() || mode->value.get<int>() < 0 || mode->value.get<int>() > 2) {
    return std::nullopt;
  }
  if (padding != nullptr && !padding->value.is_null() && padding->value != -1) return std::nullopt;
  spec.mode = static_cast<codegen::EmbeddingBagSpec::Mode>(mode->value.get<int>());
  if (spec.per_sample_weights >= 0 && spec.mode != codegen::EmbeddingBagSpec::Mode::kSum) return std::nullopt;
  spec.include_last_offset = last != nullptr && last->value.is_boolean() && last->value.get<bool>();
  for (int index : {spec.weight, spec.indices, spec.offsets, spec.per_sample_weights}) {
    spec.num_inputs = std::max(spec.num_inputs, index + 1);
  }
  return templates::TemplateMatch{std::make_unique<EmbeddingBagTemplate>(spec, multithread), ""};
}

}  // namespace kernelevolve::operators::families
