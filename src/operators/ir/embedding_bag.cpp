#include "operators/ir/embedding_bag.h"

#include <algorithm>

namespace kernelevolve::operators::ir {
namespace {

/// ABI index of argument `name` of `call` when it refers to a placeholder or parameter;
/// -1 when it is absent or null; -2 when it is computed (the family does not apply).
int AbiInput(const core::OpGraph& graph, const core::OpNode& call, const std::string& name) {
  const core::OpArg* arg = call.Arg(name);
  if (arg == nullptr || !arg->IsRef()) return arg != nullptr && !arg->value.is_null() ? -2 : -1;
  const core::OpNode* node = graph.Find(arg->ref);
  if (node == nullptr || node->kind == core::OpNodeKind::kCall) return -2;
  return node->abi_index;
}

/// The dtype of the placeholder or parameter argument `name` of `call` refers to, or
/// nullopt (absent, null or computed).
std::optional<core::DType> OperandDType(const core::OpGraph& graph, const core::OpNode& call, const std::string& name) {
  const core::OpArg* arg = call.Arg(name);
  const core::OpNode* node = arg != nullptr && arg->IsRef() ? graph.Find(arg->ref) : nullptr;
  if (node == nullptr) return std::nullopt;
  return node->dtype;
}

}  // namespace

const char* ModeName(EmbeddingBagSpec::Mode mode) {
  static const char* kModes[] = {"sum", "mean", "max"};
  return kModes[static_cast<int>(mode)];
}

std::optional<EmbeddingBagSpec> MatchEmbeddingBag(const core::OpGraph& graph, std::string* refusal) {
  const auto calls = graph.Calls();
  const core::OpNode* bag = nullptr;
  std::string other;
  for (const core::OpNode* c : calls) {
    if (c->target == "aten._embedding_bag.default" || c->target == "aten._embedding_bag_forward_only.default") {
      if (bag != nullptr) other = "a second embedding bag";
      bag = c;
    } else if (c->target != "getitem" && other.empty()) {
      other = c->target;
    }
  }
  if (bag == nullptr) return std::nullopt;
  // From here on the graph has a lookup: a refusal says why.
  const auto refuse = [&](const std::string& why) -> std::optional<EmbeddingBagSpec> {
    if (refusal != nullptr) *refusal = why;
    return std::nullopt;
  };
  if (!other.empty()) return refuse("it takes a graph that is one lookup; this one also has " + other);
  const core::OpNode* out = graph.outputs.size() == 1 ? graph.Find(graph.outputs[0]) : nullptr;
  if (out == nullptr || out->target != "getitem" || out->Arg("self") == nullptr || out->Arg("self")->ref != bag->name ||
      out->Arg("index") == nullptr || out->Arg("index")->value != 0) {
    return refuse("its one output must be the pooled rows (output 0 of the lookup)");
  }
  EmbeddingBagSpec spec;
  spec.weight = AbiInput(graph, *bag, "weight");
  spec.indices = AbiInput(graph, *bag, "indices");
  spec.offsets = AbiInput(graph, *bag, "offsets");
  spec.per_sample_weights = AbiInput(graph, *bag, "per_sample_weights");
  if (spec.weight < 0 || spec.indices < 0 || spec.offsets < 0 || spec.per_sample_weights == -2) {
    return refuse("the table, indices, offsets and per-sample weights must be inputs or parameters, not computed");
  }
  // The kernels take float32, float16 or bfloat16 tables (per-sample weights and the
  // output alike) and int64 indices and offsets; other dtypes (int32 indices, float64
  // tables) are left to the other families.
  using core::DType;
  spec.dtype = OperandDType(graph, *bag, "weight").value_or(DType::kFloat64);
  const bool table_ok = spec.dtype == DType::kFloat32 || spec.dtype == DType::kFloat16 || spec.dtype == DType::kBFloat16;
  if (!table_ok || OperandDType(graph, *bag, "indices") != DType::kInt64 ||
      OperandDType(graph, *bag, "offsets") != DType::kInt64 || out->dtype != spec.dtype ||
      (spec.per_sample_weights >= 0 && OperandDType(graph, *bag, "per_sample_weights") != spec.dtype)) {
    return refuse("it takes a float32, float16 or bfloat16 table (per-sample weights and output of the same "
                  "dtype) with int64 indices and offsets");
  }
  const core::OpArg* mode = bag->Arg("mode");
  const core::OpArg* last = bag->Arg("include_last_offset");
  const core::OpArg* padding = bag->Arg("padding_idx");
  if (mode == nullptr || !mode->value.is_number_integer() || mode->value.get<int>() < 0 || mode->value.get<int>() > 2) {
    return refuse("mode must be sum, mean or max");
  }
  if (padding != nullptr && !padding->value.is_null() && padding->value != -1) return refuse("padding_idx is not supported");
  spec.mode = static_cast<EmbeddingBagSpec::Mode>(mode->value.get<int>());
  if (spec.per_sample_weights >= 0 && spec.mode != EmbeddingBagSpec::Mode::kSum) {
    return refuse("per-sample weights need mode sum (as in PyTorch)");
  }
  spec.include_last_offset = last != nullptr && last->value.is_boolean() && last->value.get<bool>();
  for (int index : {spec.weight, spec.indices, spec.offsets, spec.per_sample_weights}) {
    spec.num_inputs = std::max(spec.num_inputs, index + 1);
  }
  return spec;
}

}  // namespace kernelevolve::operators::ir
