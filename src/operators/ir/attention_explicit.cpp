#include "operators/ir/attention_explicit.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

#include "operators/ir/graph_match.h"
#include "operators/ir/grid_predicate.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;

bool IsCall(const OpNode* n) { return n != nullptr && n->kind == core::OpNodeKind::kCall; }

/// An ABI input (placeholder or parameter) of `dtype`.
bool IsInput(const OpNode* n, DType dtype) {
  return n != nullptr && !IsCall(n) && n->abi_index >= 0 && n->dtype == dtype;
}

/// The product of the dims before the last two.
int64_t Batch(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (size_t d = 0; d + 2 < shape.size(); ++d) n *= shape[d];
  return n;
}

/// The last two dims of `shape` ({-1, -1} below rank 2).
std::pair<int64_t, int64_t> Matrix(const std::vector<int64_t>& shape) {
  if (shape.size() < 2) return {-1, -1};
  return {shape[shape.size() - 2], shape.back()};
}

class ExplicitMatcher {
 public:
  explicit ExplicitMatcher(const core::OpGraph& graph) : graph_(graph) {}
  std::optional<AttentionSpec> Match();

 private:
  /// The node argument `name` of `n` refers to, or nullptr.
  const OpNode* Ref(const OpNode& n, const char* name) const {
    const core::OpArg* arg = n.Arg(name);
    return arg != nullptr && arg->IsRef() ? graph_.Find(arg->ref) : nullptr;
  }
  const OpNode* SkipViews(const OpNode* n);
  bool IsBatchView(const OpNode& n) const;
  std::optional<double> ScaleOf(const OpNode& n) const;
  const OpNode* InputThrough(const OpNode* n, bool transposed, bool scalable);
  const OpNode* Mask(const OpNode& where, AttentionSpec& spec);

  const core::OpGraph& graph_;
  std::set<const OpNode*> used_;      // every call read; must be every call of the graph
  std::vector<const OpNode*> chain_;  // the scores' calls, from the product to the softmax
  double scale_ = 1.0;
};

/// A view that only regroups the batch dims: view / _unsafe_view / reshape keeping the
/// last two dims and the batch size, an expand to the same shape (no broadcast), clone.
bool ExplicitMatcher::IsBatchView(const OpNode& n) const {
  const OpNode* in = Ref(n, "self");
  if (in == nullptr) return false;
  if (n.target == "aten.clone.default") return n.shape == in->shape;
  if (n.target == "aten.expand.default") return n.shape == in->shape;
  if (n.target != "aten.view.default" && n.target != "aten._unsafe_view.default" &&
      n.target != "aten.reshape.default") {
    return false;
  }
  return n.shape.size() >= 2 && in->shape.size() >= 2 && Matrix(n.shape) == Matrix(in->shape) &&
         Batch(n.shape) == Batch(in->shape);
}

const OpNode* ExplicitMatcher::SkipViews(const OpNode* n) {
  while (IsCall(n) && IsBatchView(*n)) {
    used_.insert(n);
    n = Ref(*n, "self");
  }
  return n;
}

/// The factor of mul / div by a finite constant (nonzero for div), or nullopt.
std::optional<double> ExplicitMatcher::ScaleOf(const OpNode& n) const {
  const bool mul = n.target == "aten.mul.Tensor" || n.target == "aten.mul.Scalar";
  const bool div = n.target == "aten.div.Tensor" || n.target == "aten.div.Scalar";
  const core::OpArg* other = n.Arg("other");
  if ((!mul && !div) || Ref(n, "self") == nullptr || other == nullptr || other->IsRef() ||
      !other->value.is_number()) {
    return std::nullopt;
  }
  const double c = other->value.get<double>();
  if (!std::isfinite(c) || (div && c == 0)) return std::nullopt;
  return mul ? c : 1.0 / c;
}

/// The float32 ABI input that operand `n` of a product reads, through batch views,
/// scales (when `scalable`) and, when `transposed`, exactly one permute swapping the
/// last two dims; nullptr otherwise.
const OpNode* ExplicitMatcher::InputThrough(const OpNode* n, bool transposed, bool scalable) {
  bool permuted = false;
  while (IsCall(n)) {
    used_.insert(n);
    const OpNode* in = Ref(*n, "self");
    if (IsBatchView(*n)) {
      n = in;
      continue;
    }
    if (const std::optional<double> c = scalable ? ScaleOf(*n) : std::nullopt) {
      scale_ *= *c;
      n = in;
      continue;
    }
    if (transposed && !permuted && n->target == "aten.permute.default" && in != nullptr) {
      const core::OpArg* dims = n->Arg("dims");
      const int64_t rank = static_cast<int64_t>(in->shape.size());
      if (rank < 2 || dims == nullptr || !dims->value.is_array() ||
          static_cast<int64_t>(dims->value.size()) != rank) {
        return nullptr;
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (!dims->value[d].is_number_integer()) return nullptr;
        const int64_t got = (dims->value[d].get<int64_t>() + rank) % rank;
        const int64_t want = d == rank - 2 ? rank - 1 : (d == rank - 1 ? rank - 2 : d);
        if (got != want) return nullptr;
      }
      permuted = true;
      n = in;
      continue;
    }
    return nullptr;
  }
  return permuted == transposed && IsInput(n, DType::kFloat32) ? n : nullptr;
}

/// Reads where(cond, -inf, s) / where(cond, s, -inf) into `spec` (see the header) and
/// returns s; nullptr for any other mask.
const OpNode* ExplicitMatcher::Mask(const OpNode& where, AttentionSpec& spec) {
  const std::optional<double> self = ScalarTensorValue(graph_, where.Arg("self"));
  const std::optional<double> other = ScalarTensorValue(graph_, where.Arg("other"));
  const bool fill_self = self && std::isinf(*self) && *self < 0;  // masked_fill(cond, -inf)
  const bool fill_other = other && std::isinf(*other) && *other < 0;
  if (fill_self == fill_other) return nullptr;
  used_.insert(Ref(where, fill_self ? "self" : "other"));
  const OpNode* scores = Ref(where, fill_self ? "other" : "self");
  // True where cond drops the key.
  bool drops = fill_self;
  const OpNode* cond = Ref(where, "condition");
  const OpNode* base = cond;
  while (IsCall(base) && (base->target == "aten.logical_not.default" ||
                          base->target == "aten.bitwise_not.default")) {
    drops = !drops;
    base = Ref(*base, "self");
  }
  if (IsInput(base, DType::kBool)) {  // a mask tensor
    if (spec.mask >= 0 || base->shape.size() > where.shape.size()) return nullptr;
    for (const OpNode* n = cond; n != base; n = Ref(*n, "self")) used_.insert(n);
    spec.mask = base->abi_index;
    spec.mask_bool = true;
    spec.mask_inverted = drops;
    return scores;
  }
  // A triangle built from index comparisons: causal when it drops exactly j > i.
  const auto [rows, cols] = Matrix(where.shape);
  if (cond == nullptr || spec.causal) return nullptr;
  const std::optional<GridHalfPlane> plane = MatchGridHalfPlane(graph_, *cond, rows, cols, used_);
  if (!plane) return nullptr;
  const GridHalfPlane dropped = fill_self ? *plane : plane->Not();  // j - i - 1 >= 0, times b > 0
  if (dropped.b <= 0 || dropped.a != -dropped.b || dropped.c != -dropped.b) return nullptr;
  spec.causal = true;
  return scores;
}

std::optional<AttentionSpec> ExplicitMatcher::Match() {
  if (graph_.outputs.size() != 1) return std::nullopt;
  const OpNode* out = graph_.Find(graph_.outputs[0]);
  const OpNode* pv = SkipViews(out);
  if (!IsCall(pv) || pv->target != "aten.bmm.default") return std::nullopt;
  used_.insert(pv);
  const OpNode* softmax = SkipViews(Ref(*pv, "self"));
  if (!IsCall(softmax) || softmax->target != "aten._softmax.default") return std::nullopt;
  used_.insert(softmax);
  const std::optional<int64_t> dim = ConstInt(*softmax, "dim", 0);
  const int64_t rank = static_cast<int64_t>(softmax->shape.size());
  if (!dim || (*dim + rank) % std::max<int64_t>(rank, 1) != rank - 1 ||
      ConstBool(*softmax, "half_to_float", false) != false) {
    return std::nullopt;
  }
  const OpNode* v = InputThrough(Ref(*pv, "mat2"), false, false);
  if (v == nullptr) return std::nullopt;

  // From the softmax back to the product: masks, then (before them) scales and views.
  AttentionSpec spec;
  bool scaled = false;
  const OpNode* s = Ref(*softmax, "self");
  chain_.push_back(softmax);
  while (IsCall(s) && s->target != "aten.bmm.default") {
    used_.insert(s);
    chain_.push_back(s);
    if (IsBatchView(*s)) {
      s = Ref(*s, "self");
    } else if (const std::optional<double> c = ScaleOf(*s)) {
      scale_ *= *c;
      scaled = true;
      s = Ref(*s, "self");
    } else if (s->target == "aten.where.self" && !scaled) {
      s = Mask(*s, spec);
    } else if (s->target == "aten.add.Tensor" && !scaled && ConstInt(*s, "alpha", 1) == 1) {
      const OpNode* x = Ref(*s, "self");
      const OpNode* y = Ref(*s, "other");
      const OpNode* m =
          IsInput(y, DType::kFloat32) ? y : (IsInput(x, DType::kFloat32) ? x : nullptr);
      if (m == nullptr || spec.mask >= 0 || m->shape.size() > s->shape.size()) return std::nullopt;
      spec.mask = m->abi_index;
      s = m == y ? x : y;
    } else {
      return std::nullopt;
    }
  }
  if (!IsCall(s)) return std::nullopt;
  used_.insert(s);
  const OpNode* q = InputThrough(Ref(*s, "self"), false, true);
  const OpNode* k = InputThrough(Ref(*s, "mat2"), true, true);
  if (q == nullptr || k == nullptr) return std::nullopt;

  // Shapes: q [B, (H,) L, E], k and v [B, (H,) S, E], the scores [B, (H,) L, S] at every
  // step, the output q's shape.
  spec.rank = static_cast<int>(q->shape.size());
  if ((spec.rank != 3 && spec.rank != 4) || k->shape.size() != q->shape.size() ||
      v->shape != k->shape || out->shape != q->shape || out->dtype != DType::kFloat32) {
    return std::nullopt;
  }
  const auto [l, e] = Matrix(q->shape);
  const auto [s_len, ke] = Matrix(k->shape);
  if (ke != e || !std::equal(q->shape.begin(), q->shape.end() - 2, k->shape.begin()))
    return std::nullopt;
  std::vector<int64_t> scores(q->shape.begin(), q->shape.end() - 2);
  scores.insert(scores.end(), {l, s_len});
  for (const OpNode* n : chain_) {
    if (n->dtype != DType::kFloat32 || (!IsBatchView(*n) && n->shape != scores))
      return std::nullopt;
  }
  if (!std::isfinite(scale_)) return std::nullopt;
  // Nothing else in the graph: every call was read above.
  for (const OpNode* c : graph_.Calls()) {
    if (used_.count(c) == 0) return std::nullopt;
  }
  spec.q = q->abi_index;
  spec.head_dim = e;
  spec.k = k->abi_index;
  spec.v = v->abi_index;
  spec.scale = scale_;
  spec.masked_row_nan = true;  // softmax over a row of -inf is 0 / 0 in eager
  for (int index : {spec.q, spec.k, spec.v, spec.mask})
    spec.num_inputs = std::max(spec.num_inputs, index + 1);
  return spec;
}

}  // namespace

std::optional<AttentionSpec> MatchExplicitAttention(const core::OpGraph& graph) {
  return ExplicitMatcher(graph).Match();
}

}  // namespace kernelevolve::operators::ir
