// Core ATen lowering rules for ordering along one dim: aten.sort (default and stable)
// and aten.topk, as counting reductions that every backend prints (the generic form;
// on the CPU the "sort" family (families/sort) is the fast path for a graph that is
// one sort or top-k).
//
// The rank of element j in its row is the number of elements that come before it:
//   rank[j] = #{i : before(x[i], x[j]) or (same(x[i], x[j]) and i < j)}
// with before = ">" for descending order (torch's largest=True) and "<" for ascending,
// NaN ordered above every number and equal to itself, as torch.sort and torch.topk
// order it (docs.pytorch.org/docs/stable/generated/torch.sort.html: "NaN values are
// considered larger than any other value"). Ties keep their input order, which is
// torch.sort's stable=True order; ranks are therefore a permutation of 0 .. n-1. The
// element at sorted position p is the one whose rank is p: an argmax over j of
// (rank[j] == p), whose first maximum is that unique j. O(n^2) per row: exact for any
// dtype and every backend, fine for rows of a few thousand, slow beyond.
#include "operators/ir/core_lowerer.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;
using Outs = std::vector<int>;

/// True when element a (at position i) comes before element b (at position j).
Expr Before(const Expr& a, const Expr& b, const Expr& i, const Expr& j, bool descending) {
  Expr order = Op(descending ? Prim::kGt : Prim::kLt, {a, b});
  Expr same = Op(Prim::kEq, {a, b});
  if (core::IsFloatingPoint(a->dtype)) {
    const Expr a_nan = Op(Prim::kIsNan, {a});
    const Expr b_nan = Op(Prim::kIsNan, {b});
    // NaN is the largest value: first when descending, last when ascending.
    const Expr nan_order = descending ? Op(Prim::kLogicalAnd, {a_nan, Op(Prim::kLogicalNot, {b_nan})})
                                      : Op(Prim::kLogicalAnd, {Op(Prim::kLogicalNot, {a_nan}), b_nan});
    order = Op(Prim::kLogicalOr, {order, nan_order});
    same = Op(Prim::kLogicalOr, {same, Op(Prim::kLogicalAnd, {a_nan, b_nan})});
  }
  return Op(Prim::kLogicalOr, {order, Op(Prim::kLogicalAnd, {same, Op(Prim::kLt, {i, j})})});
}

/// The first `count` elements along `dim` of x in sorted order: (values, int64 positions).
Outs SortedPrefix(CoreLowerer& l, const OpNode& n, int x, int dim, int64_t count, bool descending) {
  const auto xs = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const size_t rank = xs.size();
  if (rank == 0) {  // a 0-d tensor sorts to itself at position 0
    return {l.Compute({}, dt, l.Read(x, {})), l.Compute({}, DType::kInt64, Int(0))};
  }
  const auto d = static_cast<size_t>(dim);
  const int64_t len = xs[d];
  if (count < 0 || count > len) {
    l.Unsupported(n, "k outside [0, size of the dim]");
    return {};
  }
  // Comparisons in the input's dtype; bool as int64 (false < true).
  const DType cmp = dt == DType::kBool ? DType::kInt64 : dt;
  const Expr j = Var(static_cast<int>(d));
  const Expr i = Var(static_cast<int>(rank));
  std::vector<Expr> at_i = IndexVars(rank);
  at_i[d] = i;
  const Expr before = Before(Cast(l.Read(x, at_i), cmp), Cast(l.Read(x, IndexVars(rank)), cmp), i, j, descending);
  const int ranks = l.Reduce(xs, DType::kInt64, {len}, ReduceOp::kSum, Cast(before, DType::kInt64));
  auto out_shape = xs;
  out_shape[d] = count;
  std::vector<Expr> rank_at = IndexVars(rank);
  rank_at[d] = Var(static_cast<int>(rank));
  const Expr is_p = Op(Prim::kEq, {l.Read(ranks, rank_at), Var(static_cast<int>(d))});
  const int positions = l.Reduce(out_shape, DType::kInt64, {len}, ReduceOp::kArgMax, Cast(is_p, DType::kFloat32));
  std::vector<Expr> src = IndexVars(rank);
  src[d] = l.Read(positions, IndexVars(rank));
  const int values = l.Compute(out_shape, dt, l.Read(x, src));
  return {values, positions};
}

/// The node's `self` and its normalized `dim` (default -1; 0 for a 0-d tensor).
bool SelfAndDim(CoreLowerer& l, const OpNode& n, int* x, int* dim) {
  *x = l.Tensor(n, "self");
  if (*x < 0) return false;
  const size_t rank = l.Def(*x).shape.size();
  *dim = rank == 0 ? 0 : l.NormDim(l.IntArg(n, "dim", -1), rank);
  return !l.Failed();
}

/// aten.sort.default(self, dim=-1, descending=False) and
/// aten.sort.stable(self, *, stable=None, dim=-1, descending=False) -> (values, indices).
Outs Sort(CoreLowerer& l, const OpNode& n) {
  int x, dim;
  if (!SelfAndDim(l, n, &x, &dim)) return {};
  const int64_t len = l.Def(x).shape.empty() ? 1 : l.Def(x).shape[static_cast<size_t>(dim)];
  return SortedPrefix(l, n, x, dim, len, l.IntArg(n, "descending", 0) != 0);
}

/// aten.topk.default(self, k, dim=-1, largest=True, sorted=True) -> (values, indices),
/// always in sorted order (sorted=False leaves the order to the implementation).
Outs TopK(CoreLowerer& l, const OpNode& n) {
  int x, dim;
  if (!SelfAndDim(l, n, &x, &dim)) return {};
  return SortedPrefix(l, n, x, dim, l.IntArg(n, "k", 1), l.IntArg(n, "largest", 1) != 0);
}

const std::vector<LoweringRule> kRules = {
    {"aten.sort.default", Sort, "reduce count of elements before each (rank, ties in input order), then argmax of rank == position"},
    {"aten.sort.stable", Sort, "reduce count of elements before each (rank, ties in input order), then argmax of rank == position"},
    {"aten.topk.default", TopK, "the sort's ranks (largest first), the first k positions"},
};

}  // namespace

const std::vector<LoweringRule>& SortRules() { return kRules; }

}  // namespace kernelevolve::operators::ir
