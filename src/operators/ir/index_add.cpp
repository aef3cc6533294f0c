#include "operators/ir/index_add.h"

#include <algorithm>
#include <set>

namespace kernelevolve::operators::ir {
namespace {

/// Reads the graph around one index_put, remembering which calls the match used.
class GraphReader {
 public:
  explicit GraphReader(const core::OpGraph& graph) : graph_(graph) {}

  /// The node argument `name` of `call` refers to, or nullptr (absent, constant).
  const core::OpNode* Ref(const core::OpNode& call, const std::string& name) {
    const core::OpArg* arg = call.Arg(name);
    return arg != nullptr && arg->IsRef() ? Use(graph_.Find(arg->ref)) : nullptr;
  }

  /// `node` when it is a call of `target`, marked used; else nullptr.
  const core::OpNode* Call(const core::OpNode* node, const std::string& target) {
    return node != nullptr && node->kind == core::OpNodeKind::kCall && node->target == target ? Use(node) : nullptr;
  }

  /// Whether every call of the graph was used by the match.
  bool UsedEveryCall() const {
    for (const core::OpNode* c : graph_.Calls()) {
      if (used_.count(c->name) == 0) return false;
    }
    return true;
  }

  const core::OpGraph& graph() const { return graph_; }

 private:
  const core::OpNode* Use(const core::OpNode* node) {
    if (node != nullptr && node->kind == core::OpNodeKind::kCall) used_.insert(node->name);
    return node;
  }
  const core::OpGraph& graph_;
  std::set<std::string> used_;
};

/// The ABI index of `node` when it is an input of `dtype` and `rank`, else -1.
int AbiInput(const core::OpNode* node, core::DType dtype, size_t rank) {
  if (node == nullptr || node->kind == core::OpNodeKind::kCall || node->dtype != dtype || node->shape.size() != rank) {
    return -1;
  }
  return node->abi_index;
}

bool IsInt(const core::OpNode& call, const std::string& name, int64_t value) {
  const core::OpArg* arg = call.Arg(name);
  return arg != nullptr && !arg->IsRef() && arg->value.is_number_integer() && arg->value.get<int64_t>() == value;
}

bool IsNullOrAbsent(const core::OpNode& call, const std::string& name) {
  const core::OpArg* arg = call.Arg(name);
  return arg == nullptr || (!arg->IsRef() && arg->value.is_null());
}

/// The lengths' ABI index when `index` is repeat_interleave(lengths), possibly read
/// through index_select(arange(0, len(lengths), 1), 0, .); else -1.
int SegmentLengths(GraphReader& g, const core::OpNode* index) {
  if (const core::OpNode* select = g.Call(index, "aten.index_select.default")) {
    const core::OpNode* arange = g.Call(g.Ref(*select, "self"), "aten.arange.start_step");
    if (arange == nullptr || !IsInt(*select, "dim", 0) || !IsInt(*arange, "start", 0) || !IsInt(*arange, "step", 1) ||
        arange->dtype != core::DType::kInt64) {
      return -1;
    }
    index = g.Ref(*select, "index");
    const core::OpNode* repeat = g.Call(index, "aten.repeat_interleave.Tensor");
    const core::OpNode* lengths = repeat != nullptr ? g.Ref(*repeat, "repeats") : nullptr;
    if (lengths == nullptr || lengths->shape.size() != 1 || !IsInt(*arange, "end", lengths->shape[0])) return -1;
  }
  const core::OpNode* repeat = g.Call(index, "aten.repeat_interleave.Tensor");
  if (repeat == nullptr || !IsNullOrAbsent(*repeat, "output_size")) return -1;
  return AbiInput(g.Ref(*repeat, "repeats"), core::DType::kInt64, 1);
}

/// Whether `div` is `result / lengths.clamp(min=1).to(float32)[:, None]`.
bool IsSegmentMean(GraphReader& g, const core::OpNode* div, const core::OpNode& result, int lengths) {
  if (g.Call(div, "aten.div.Tensor") == nullptr || result.shape.size() != 2) return false;
  const core::OpNode* self = g.Ref(*div, "self");
  const core::OpNode* unsqueeze = g.Call(g.Ref(*div, "other"), "aten.unsqueeze.default");
  if (self != &result || unsqueeze == nullptr || !(IsInt(*unsqueeze, "dim", 1) || IsInt(*unsqueeze, "dim", -1))) {
    return false;
  }
  const core::OpNode* cast = g.Call(g.Ref(*unsqueeze, "self"), "aten._to_copy.default");
  if (cast == nullptr || cast->dtype != core::DType::kFloat32) return false;
  const core::OpNode* arg = g.Ref(*cast, "self");
  const core::OpNode* clamp = g.Call(arg, "aten.clamp.default");
  if (clamp == nullptr) {
    clamp = g.Call(arg, "aten.clamp_min.default");
    if (clamp == nullptr || !IsInt(*clamp, "min", 1)) return false;
  } else if (!IsInt(*clamp, "min", 1) || !IsNullOrAbsent(*clamp, "max")) {
    return false;
  }
  return AbiInput(g.Ref(*clamp, "self"), core::DType::kInt64, 1) == lengths;
}

/// index_add(..., alpha=a) arrives as index_put(values = mul(src, a)): when `values` is
/// such a product of a float32 node and a number constant, records a in `spec` and moves
/// `values` to its first operand. False when it is a product of another kind.
bool ScaledValues(GraphReader& g, const core::OpNode*& values, IndexAddSpec& spec) {
  const core::OpNode* mul = g.Call(values, "aten.mul.Tensor");
  if (mul == nullptr) mul = g.Call(values, "aten.mul.Scalar");
  if (mul == nullptr) return true;
  const core::OpArg* other = mul->Arg("other");
  const core::OpNode* src = g.Ref(*mul, "self");
  if (other == nullptr || other->IsRef() || !other->value.is_number() || src == nullptr ||
      src->shape != mul->shape || mul->dtype != core::DType::kFloat32) {
    return false;
  }
  spec.scaled = true;
  spec.alpha = other->value.get<double>();
  values = src;
  return true;
}

}  // namespace

std::optional<IndexAddSpec> MatchIndexAdd(const core::OpGraph& graph) {
  GraphReader g(graph);
  const core::OpNode* put = nullptr;
  for (const core::OpNode* c : graph.Calls()) {
    // The in-place spelling (out.index_add_(...) on a fresh tensor captures as
    // index_put_, the graph's output naming it) computes the same values.
    if (c->target == "aten.index_put.default" || c->target == "aten.index_put_.default") {
      if (put != nullptr) return std::nullopt;
      put = g.Call(c, c->target);
    }
  }
  if (put == nullptr || graph.outputs.size() != 1 || put->dtype != core::DType::kFloat32 || put->shape.empty()) {
    return std::nullopt;
  }
  const core::OpArg* accumulate = put->Arg("accumulate");
  const core::OpArg* indices = put->Arg("indices");
  if (accumulate == nullptr || accumulate->value != true || indices == nullptr || !indices->value.is_array() ||
      indices->value.size() != 1 || !indices->value[0].is_object() || !indices->value[0].contains("ref")) {
    return std::nullopt;
  }
  IndexAddSpec spec;
  const size_t rank = put->shape.size();
  // self: an ABI input of the output's shape, or a constant fill of it.
  const core::OpNode* self = g.Ref(*put, "self");
  if (self != nullptr && self->kind != core::OpNodeKind::kCall) {
    spec.self_is_input = true;
    spec.self = AbiInput(self, core::DType::kFloat32, rank);
    if (spec.self < 0 || self->shape != put->shape) return std::nullopt;
  } else if (const core::OpNode* full = g.Call(self, "aten.full.default")) {
    const core::OpArg* fill = full->Arg("fill_value");
    if (fill == nullptr || fill->IsRef() || !fill->value.is_number() || full->shape != put->shape ||
        full->dtype != core::DType::kFloat32) {
      return std::nullopt;
    }
    spec.fill = fill->value.get<double>();
  } else {
    return std::nullopt;
  }
  // values: rows of the output's width, possibly times a constant (index_add's alpha).
  const core::OpNode* values = g.Ref(*put, "values");
  if (!ScaledValues(g, values, spec)) return std::nullopt;
  spec.values = AbiInput(values, core::DType::kFloat32, rank);
  if (spec.values < 0 || !std::equal(put->shape.begin() + 1, put->shape.end(), values->shape.begin() + 1)) {
    return std::nullopt;
  }
  // The index: an ABI tensor, or segment ids of ABI lengths.
  const core::OpNode* index = graph.Find(indices->value[0]["ref"].get<std::string>());
  if (index != nullptr && index->kind != core::OpNodeKind::kCall) {
    spec.index = AbiInput(index, core::DType::kInt64, 1);
    if (spec.index < 0) return std::nullopt;
  } else {
    spec.segments = true;
    spec.lengths = SegmentLengths(g, index);
    if (spec.lengths < 0) return std::nullopt;
  }
  // One value row per index: values broadcast across the indices (index_put allows a
  // [1, ...] or lower-rank values) are the loop nest's.
  if (index == nullptr || index->shape.size() != 1 || index->shape[0] != values->shape[0]) return std::nullopt;
  const core::OpNode* out = graph.Find(graph.outputs[0]);
  if (out != put) {
    if (!spec.segments || !IsSegmentMean(g, out, *put, spec.lengths)) return std::nullopt;
    spec.mean = true;
  }
  if (!g.UsedEveryCall()) return std::nullopt;
  for (int input : {spec.self, spec.index, spec.lengths, spec.values}) spec.num_inputs = std::max(spec.num_inputs, input + 1);
  return spec;
}

}  // namespace kernelevolve::operators::ir
