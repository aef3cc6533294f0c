// Core ATen lowering rules for pairwise distances: aten._cdist_forward (torch.cdist)
// and aten._pdist_forward (F.pdist), as reductions over the feature dim:
//   p = 0: the number of differing features; p = 1: sum |d|; p = 2: sqrt(sum d^2);
//   p = inf: max |d|; other p: (sum |d|^p)^(1/p)
// (docs.pytorch.org/docs/stable/generated/torch.cdist.html). For p = 2 on large inputs
// PyTorch computes |x|^2 + |y|^2 - 2 x.y with a matmul; the direct sum here agrees
// within float32 rounding.
#include <cmath>

#include "operators/ir/core_lowerer.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;
using V = std::vector<Expr>;
using Outs = std::vector<int>;

/// The distance of order p over `extent` features given the difference `d` (an
/// expression of the reduced var): a reduction to `shape`, then its finishing root.
int Distance(CoreLowerer& l, const std::vector<int64_t>& shape, DType dt, int64_t extent, double p, const Expr& d) {
  const Expr a = Op(Prim::kAbs, {d});
  Expr term;
  ReduceOp op = ReduceOp::kSum;
  if (p == 0) term = Cast(Op(Prim::kNe, {d, Constant(0, dt)}), dt);
  else if (p == 1) term = a;
  else if (p == 2) term = Op(Prim::kMul, {d, d});
  else if (std::isinf(p)) term = a, op = ReduceOp::kMax;
  else term = Op(Prim::kPow, {a, Constant(p, dt)});
  const int r = l.Reduce(shape, dt, {extent}, op, term);
  if (p == 0 || p == 1 || std::isinf(p)) return r;
  const Expr sum = l.Read(r, IndexVars(shape.size()));
  const Expr root = p == 2 ? Op(Prim::kSqrt, {sum}) : Op(Prim::kPow, {sum, Constant(1.0 / p, dt)});
  return l.Compute(shape, dt, root);
}

/// _cdist_forward(x1 [B..., P, M], x2 [B..., R, M], p, compute_mode) -> [B..., P, R].
Outs CDist(CoreLowerer& l, const OpNode& n) {
  const int x1 = l.Tensor(n, "x1"), x2 = l.Tensor(n, "x2");
  if (x1 < 0 || x2 < 0) return {};
  const auto a = l.Def(x1).shape, b = l.Def(x2).shape;
  const double p = l.Number(n, "p", 2);
  if (a.size() < 2 || a.size() != b.size() || !std::equal(a.begin(), a.end() - 2, b.begin()) || a.back() != b.back() ||
      !core::IsFloatingPoint(n.dtype) || p < 0) {
    l.Unsupported(n, "cdist needs equal batch dims, equal feature counts, floats and p >= 0");
    return {};
  }
  const size_t rank = a.size();
  const Expr k = Var(static_cast<int>(rank));
  V ia = IndexVars(rank - 2), ib = IndexVars(rank - 2);
  ia.push_back(Var(static_cast<int>(rank) - 2));
  ia.push_back(k);
  ib.push_back(Var(static_cast<int>(rank) - 1));
  ib.push_back(k);
  const Expr d = Op(Prim::kSub, {Cast(l.Read(x1, ia), n.dtype), Cast(l.Read(x2, ib), n.dtype)});
  return {Distance(l, n.shape, n.dtype, a.back(), p, d)};
}

/// _pdist_forward(input [N, M], p) -> [N (N - 1) / 2]: the distance of every pair i < j
/// in row-major order. Pair k's row is i = #{r in [1, N) : start(r) <= k} with
/// start(r) = r N - r (r + 1) / 2 (the pairs of rows before r), and j = k - start(i) + i + 1.
Outs PDist(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const double p = l.Number(n, "p", 2);
  if (s.size() != 2 || !core::IsFloatingPoint(n.dtype) || p < 0) {
    l.Unsupported(n, "pdist needs a 2-d floating input and p >= 0");
    return {};
  }
  const int64_t N = s[0], M = s[1];
  const int64_t pairs = N * (N - 1) / 2;
  if (pairs == 0) return {l.Compute({0}, n.dtype, Constant(0, n.dtype))};
  const auto start = [N](const Expr& r) { return IAdd(IMul(r, N), IMul(IFloorDiv(IMul(r, IAdd(r, 1)), 2), -1)); };
  const Expr r = IAdd(Var(1), 1);  // r in [1, N)
  const int row = l.Reduce({pairs}, DType::kInt64, {N - 1}, ReduceOp::kSum,
                           Cast(Op(Prim::kLe, {start(r), Var(0)}), DType::kInt64));
  const Expr i = l.Read(row, {Var(0)});
  const Expr j = IAdd(IAdd(Var(0), IMul(start(i), -1)), IAdd(i, 1));
  const Expr d = Op(Prim::kSub, {Cast(l.Read(x, {i, Var(1)}), n.dtype), Cast(l.Read(x, {j, Var(1)}), n.dtype)});
  return {Distance(l, {pairs}, n.dtype, M, p, d)};
}

const std::vector<LoweringRule> kRules = {
    {"aten._cdist_forward.default", CDist, "reduce over the features of abs(x1 - x2): count (p 0), sum (1), sum of squares then sqrt (2), max (inf), else p-th powers then root"},
    {"aten._pdist_forward.default", PDist, "row of each pair by a count reduction, then cdist's reduction for rows i < j"},
};

}  // namespace

const std::vector<LoweringRule>& DistanceRules() { return kRules; }

}  // namespace kernelevolve::operators::ir
