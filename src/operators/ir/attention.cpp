#include "operators/ir/attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "operators/ir/attention_explicit.h"
#include "operators/ir/graph_match.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;

constexpr const char* kSdpa = "aten._scaled_dot_product_flash_attention_for_cpu.default";

/// True for the capture's spelling of a bool mask: where(cond, 0, -inf) on a bool input.
const OpNode* BoolMaskInput(const core::OpGraph& graph, const OpNode& where) {
  if (where.target != "aten.where.self") return nullptr;
  const OpNode* cond = InputOperand(graph, where, "condition");
  if (cond == nullptr || cond->dtype != DType::kBool) return nullptr;
  const auto zero = ScalarTensorValue(graph, where.Arg("self"));
  const auto minus_inf = ScalarTensorValue(graph, where.Arg("other"));
  if (!zero || *zero != 0 || !minus_inf || !std::isinf(*minus_inf) || *minus_inf > 0) return nullptr;
  return cond;
}

bool Float4d(const OpNode* n) { return n != nullptr && n->dtype == DType::kFloat32 && n->shape.size() == 4; }

/// The spec of a graph that is one SDPA node (MatchAttention's first form).
std::optional<AttentionSpec> MatchSdpa(const core::OpGraph& graph) {
  const OpNode* call = nullptr;
  const OpNode* where = nullptr;
  for (const OpNode* c : graph.Calls()) {
    if (c->target == kSdpa) {
      if (call != nullptr) return std::nullopt;
      call = c;
    } else if (c->target == "aten.where.self") {
      if (where != nullptr) return std::nullopt;
      where = c;
    } else if (c->target != "getitem" && c->target != "aten.scalar_tensor.default") {
      return std::nullopt;
    }
  }
  if (call == nullptr || graph.outputs.size() != 1 || ResultIndex(graph, graph.outputs[0], *call) != 0) {
    return std::nullopt;
  }
  const OpNode* q = InputOperand(graph, *call, "query");
  const OpNode* k = InputOperand(graph, *call, "key");
  const OpNode* v = InputOperand(graph, *call, "value");
  if (!Float4d(q) || !Float4d(k) || !Float4d(v)) return std::nullopt;
  // k and v [B, H, S, E] with q's B, H and E (grouped-query attention, fewer k / v heads,
  // and other value head sizes are left to the loop nest).
  for (const OpNode* t : {k, v}) {
    if (t->shape[0] != q->shape[0] || t->shape[1] != q->shape[1] || t->shape[2] != k->shape[2] ||
        t->shape[3] != q->shape[3]) {
      return std::nullopt;
    }
  }
  const core::OpArg* dropout = call->Arg("dropout_p");
  if (dropout != nullptr && (dropout->IsRef() || (dropout->value.is_number() && dropout->value.get<double>() != 0))) {
    return std::nullopt;
  }
  const std::optional<bool> causal = ConstBool(*call, "is_causal", false);
  if (!causal) return std::nullopt;
  AttentionSpec spec;
  spec.q = q->abi_index;
  spec.k = k->abi_index;
  spec.v = v->abi_index;
  spec.head_dim = q->shape.back();
  spec.causal = *causal;
  const core::OpArg* scale = call->Arg("scale");
  if (scale != nullptr && (scale->IsRef() || !(scale->value.is_null() || scale->value.is_number()))) {
    return std::nullopt;
  }
  if (scale != nullptr && scale->value.is_number()) spec.scale = scale->value.get<double>();
  if (spec.scale && !std::isfinite(*spec.scale)) return std::nullopt;
  const core::OpArg* mask = call->Arg("attn_mask");
  if (mask != nullptr && mask->IsRef()) {
    const OpNode* m = graph.Find(mask->ref);
    if (m == nullptr) return std::nullopt;
    if (m->kind != core::OpNodeKind::kCall) {
      if (m->dtype != DType::kFloat32 || m->shape.size() > 4 || where != nullptr) return std::nullopt;
      spec.mask = m->abi_index;
    } else {
      const OpNode* cond = m == where ? BoolMaskInput(graph, *m) : nullptr;
      if (cond == nullptr || cond->shape.size() > 4) return std::nullopt;
      spec.mask = cond->abi_index;
      spec.mask_bool = true;
    }
  } else if (where != nullptr) {
    return std::nullopt;
  }
  for (int index : {spec.q, spec.k, spec.v, spec.mask}) spec.num_inputs = std::max(spec.num_inputs, index + 1);
  return spec;
}

}  // namespace

std::optional<AttentionSpec> MatchAttention(const core::OpGraph& graph) {
  if (std::optional<AttentionSpec> spec = MatchSdpa(graph)) return spec;
  return MatchExplicitAttention(graph);
}

std::string MaskText(const AttentionSpec& spec) {
  if (spec.mask < 0) return "";
  if (!spec.mask_bool) return ", additive mask";
  return spec.mask_inverted ? ", boolean mask (true = masked out)" : ", boolean mask";
}

}  // namespace kernelevolve::operators::ir
