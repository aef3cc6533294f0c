#include "operators/ir/graph_match.h"

#include <algorithm>
#include <limits>

namespace kernelevolve::operators::ir {

const core::OpNode* LoneCall(const core::OpGraph& graph, const std::vector<std::string>& targets) {
  const core::OpNode* call = nullptr;
  for (const core::OpNode* c : graph.Calls()) {
    if (std::find(targets.begin(), targets.end(), c->target) != targets.end()) {
      if (call != nullptr) return nullptr;
      call = c;
    } else if (c->target != "getitem") {
      return nullptr;
    }
  }
  return graph.outputs.empty() ? nullptr : call;
}

const core::OpNode* InputOperand(const core::OpGraph& graph, const core::OpNode& call, const std::string& name) {
  const core::OpArg* arg = call.Arg(name);
  const core::OpNode* node = arg != nullptr && arg->IsRef() ? graph.Find(arg->ref) : nullptr;
  return node == nullptr || node->kind == core::OpNodeKind::kCall ? nullptr : node;
}

int ResultIndex(const core::OpGraph& graph, const std::string& name, const core::OpNode& call) {
  const core::OpNode* out = graph.Find(name);
  if (out == nullptr || out->target != "getitem") return -1;
  const core::OpArg* of = out->Arg("self");
  const core::OpArg* index = out->Arg("index");
  if (of == nullptr || of->ref != call.name || index == nullptr || !index->value.is_number_integer()) return -1;
  return std::max(index->value.get<int>(), -1);
}

std::optional<int64_t> ConstInt(const core::OpNode& call, const std::string& name, int64_t fallback) {
  const core::OpArg* arg = call.Arg(name);
  if (arg == nullptr || arg->value.is_null()) return arg != nullptr && arg->IsRef() ? std::nullopt : std::optional(fallback);
  if (arg->IsRef()) return std::nullopt;
  if (arg->value.is_boolean()) return arg->value.get<bool>() ? 1 : 0;
  if (!arg->value.is_number_integer()) return std::nullopt;
  return arg->value.get<int64_t>();
}

std::optional<double> ScalarTensorValue(const core::OpGraph& graph, const core::OpArg* arg) {
  const core::OpNode* node = arg != nullptr && arg->IsRef() ? graph.Find(arg->ref) : nullptr;
  if (node == nullptr || node->target != "aten.scalar_tensor.default") return std::nullopt;
  const core::OpArg* s = node->Arg("s");
  if (s == nullptr || s->IsRef()) return std::nullopt;
  if (s->value.is_number()) return s->value.get<double>();
  if (s->value == "-inf") return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

std::optional<bool> ConstBool(const core::OpNode& call, const std::string& name, bool fallback) {
  const core::OpArg* arg = call.Arg(name);
  if (arg == nullptr || (!arg->IsRef() && arg->value.is_null())) return fallback;
  if (arg->IsRef() || !arg->value.is_boolean()) return std::nullopt;
  return arg->value.get<bool>();
}

}  // namespace kernelevolve::operators::ir
