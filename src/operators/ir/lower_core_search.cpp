// Core ATen lowering rules for searches in sorted tensors (feature bucketization, id
// lookup in sorted tables): torch.bucketize and torch.searchsorted as count reductions,
// and repeat_interleave (segment ids of jagged lengths) as a search in its prefix sums.
//
// For sorted boundaries b[0..m) and a value x, the insertion position is the number of
// boundaries "before" x:
//   left  (bucketize right=False, searchsorted side="left"):  #{k : !(b[k] >= x)}
//   right (bucketize right=True,  searchsorted side="right"): #{k : !(b[k] >  x)}
// On sorted, NaN-free boundaries this equals the binary search's result (lower_bound /
// upper_bound), ties included; the negated comparison also gives PyTorch's answer for a
// NaN value (m: every comparison with NaN is false), since PyTorch's binary search
// (aten/src/ATen/native/Bucketization.cpp, cus_lower_bound / cus_upper_bound) moves
// right on `!(b >= x)` / `!(b > x)`. The count is O(m) per value: exact and
// vectorizable, fast for the few dozen boundaries of a bucketized feature. Past
// kCountLimit boundaries (an id table) the position is found by binary lifting
// instead, O(log m) per value: pos = 0, then for step = 2^k, ..., 2, 1: pos += step
// when pos + step <= m and b[pos + step - 1] is before x. On sorted boundaries the
// predicate holds on a prefix, so pos is the same count (lower_bound / upper_bound).
#include <algorithm>

#include "operators/ir/core_lowerer.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;
using Outs = std::vector<int>;

/// Sequences longer than this take the binary form (the count form is exact and
/// vectorizes; at 64 boundaries it costs 64 compares a value against 7 dependent loads).
constexpr int64_t kCountLimit = 64;

/// count_k !(seq[lead..., k] OP x[i...]) over the last dim of `seq`, shaped as `x`.
/// `seq` is 1-D (shared by every value) or has x's leading dims (one row per row of x).
int CountBefore(CoreLowerer& l, const OpNode& n, int seq, int x, bool right) {
  const auto& xs = l.Def(x).shape;
  const auto& ss = l.Def(seq).shape;
  if (ss.empty()) {
    l.Unsupported(n, "the sorted sequence is a scalar");
    return -1;
  }
  const bool batched = ss.size() > 1;
  if (batched && (ss.size() != xs.size() || !std::equal(ss.begin(), ss.end() - 1, xs.begin()))) {
    l.Unsupported(n, "an N-D sorted sequence needs the values' leading dims");
    return -1;
  }
  const size_t rank = xs.size();
  const int64_t m = ss.back();
  const DType cmp = core::IsFloatingPoint(l.Def(seq).dtype) || core::IsFloatingPoint(l.Def(x).dtype)
                        ? DType::kFloat64 : DType::kInt64;
  std::vector<Expr> at;  // seq index: leading output vars (batched), then the reduced var
  if (batched) at = IndexVars(rank - 1);
  at.push_back(Var(static_cast<int>(rank)));
  const Expr v = Cast(l.Read(x, IndexVars(rank)), cmp);
  const auto before = [&](const Expr& b) { return Op(Prim::kLogicalNot, {Op(right ? Prim::kGt : Prim::kGe, {b, v})}); };
  const DType out = n.dtype == DType::kInt32 ? DType::kInt32 : DType::kInt64;
  if (m <= kCountLimit) return l.Reduce(xs, out, {m}, ReduceOp::kSum, Cast(before(Cast(l.Read(seq, at), cmp)), out));
  // Binary lifting: the reads stay inside the row (min(pos + step, m) - 1).
  std::vector<Expr> row = batched ? IndexVars(rank - 1) : std::vector<Expr>{};
  int64_t step = 1;
  while (step * 2 <= m) step *= 2;
  Expr pos = Int(0);
  for (; step >= 1; step /= 2) {
    const Expr candidate = IAdd(pos, step);
    std::vector<Expr> index = row;
    index.push_back(IAdd(Op(Prim::kMinimum, {candidate, Int(m)}), -1));
    const Expr take = Op(Prim::kLogicalAnd, {Op(Prim::kLe, {candidate, Int(m)}), before(Cast(l.Read(seq, index), cmp))});
    pos = Op(Prim::kWhere, {take, candidate, pos});
  }
  return l.Compute(xs, out, Cast(pos, out));
}

/// aten.bucketize.Tensor(self, boundaries, *, out_int32, right).
Outs Bucketize(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  const int boundaries = l.Tensor(n, "boundaries");
  if (x < 0 || boundaries < 0) return {};
  if (l.Def(boundaries).shape.size() != 1) {
    l.Unsupported(n, "boundaries must be 1-D");
    return {};
  }
  const int out = CountBefore(l, n, boundaries, x, l.IntArg(n, "right", 0) != 0);
  return out < 0 ? Outs{} : Outs{out};
}

/// aten.searchsorted.Tensor(sorted_sequence, self, *, out_int32, right, side, sorter).
Outs SearchSorted(CoreLowerer& l, const OpNode& n) {
  const int seq = l.Tensor(n, "sorted_sequence");
  const int x = l.Tensor(n, "self");
  if (seq < 0 || x < 0) return {};
  if (CoreLowerer::IsTensor(n, "sorter")) {
    l.Unsupported(n, "a sorter argument");
    return {};
  }
  const nlohmann::json side = CoreLowerer::Value(n, "side");
  const bool right = side.is_string() ? side.get<std::string>() == "right" : l.IntArg(n, "right", 0) != 0;
  const int out = CountBefore(l, n, seq, x, right);
  return out < 0 ? Outs{} : Outs{out};
}

/// aten.repeat_interleave.Tensor(repeats, *, output_size): index b repeated repeats[b]
/// times, i.e. out[j] = #{b : prefix[b] <= j} over the inclusive prefix sums of the
/// repeats (a search of j in a non-decreasing sequence, right side). Its length,
/// sum(repeats), depends on the data: the captured one (or the size it is generalized
/// to, ir/generalize.h) is taken as given.
Outs RepeatInterleave(CoreLowerer& l, const OpNode& n) {
  const int repeats = l.Tensor(n, "repeats");
  if (repeats < 0) return {};
  const auto& rs = l.Def(repeats).shape;
  if (rs.size() != 1 || n.shape.size() != 1 || core::IsFloatingPoint(l.Def(repeats).dtype)) {
    l.Unsupported(n, "repeats must be a 1-D integer tensor");
    return {};
  }
  const int prefix = l.Scan(rs, DType::kInt64, 0, ScanOp::kSum, Cast(l.Read(repeats, {Var(0)}), DType::kInt64));
  const int position = l.Compute(n.shape, DType::kInt64, Var(0));
  const int out = CountBefore(l, n, prefix, position, /*right=*/true);
  return out < 0 ? Outs{} : Outs{out};
}

const std::vector<LoweringRule> kRules = {
    {"aten.bucketize.Tensor", Bucketize,
     "reduce count of boundaries before x (left / right ties); binary lifting past 64 boundaries"},
    {"aten.searchsorted.Tensor", SearchSorted,
     "reduce count of sequence elements before x (side left / right); binary lifting past 64"},
    {"aten.repeat_interleave.Tensor", RepeatInterleave,
     "scan of the repeats, then the count of prefix sums <= j (binary lifting past 64)"},
};

}  // namespace

const std::vector<LoweringRule>& SearchRules() { return kRules; }

}  // namespace kernelevolve::operators::ir
