// Lowering rules for the non-core compound ops the capture keeps whole
// (worker/kernelevolve_worker/core_aten.py KEEP: the specialized families match
// them by name), decomposed into primitives here so that a graph mixing them with
// ops no family covers still compiles as a loop-nest program: activations with a
// threshold, losses, batch norm in its native spelling.
#include <cmath>

#include "operators/ir/core_lowerer.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;
using Outs = std::vector<int>;

Expr X(CoreLowerer& l, const OpNode& n, const std::string& name = "self") {
  return l.Operand(n, name, n.shape, n.dtype);
}
Expr Num(double v, DType d) { return Constant(v, d); }

Outs Square(CoreLowerer& l, const OpNode& n) {
  const Expr x = X(l, n);
  return {l.Compute(n.shape, n.dtype, Op(Prim::kMul, {x, x}))};
}

/// threshold(self, threshold, value): value where x <= threshold.
Outs Threshold(CoreLowerer& l, const OpNode& n) {
  const Expr x = X(l, n);
  const Expr keep = Op(Prim::kGt, {x, Num(l.Number(n, "threshold"), n.dtype)});
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {keep, x, Num(l.Number(n, "value"), n.dtype)}))};
}

/// celu(self, alpha): x > 0 ? x : alpha expm1(x / alpha).
Outs Celu(CoreLowerer& l, const OpNode& n) {
  const Expr x = X(l, n);
  const double alpha = l.Number(n, "alpha", 1);
  const Expr neg = Op(Prim::kMul, {Num(alpha, n.dtype), Op(Prim::kExpm1, {Op(Prim::kDiv, {x, Num(alpha, n.dtype)})})});
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {Op(Prim::kGt, {x, Num(0, n.dtype)}), x, neg}))};
}

/// hardshrink(self, lambd): x where |x| > lambd, else 0.
Outs Hardshrink(CoreLowerer& l, const OpNode& n) {
  const Expr x = X(l, n);
  const Expr lambd = Num(l.Number(n, "lambd", 0.5), n.dtype);
  const Expr outside = Op(Prim::kLogicalOr, {Op(Prim::kGt, {x, lambd}), Op(Prim::kLt, {x, Op(Prim::kNeg, {lambd})})});
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {outside, x, Num(0, n.dtype)}))};
}

/// softshrink(self, lambd): x - lambd above lambd, x + lambd below -lambd, else 0.
Outs Softshrink(CoreLowerer& l, const OpNode& n) {
  const Expr x = X(l, n);
  const double v = l.Number(n, "lambd", 0.5);
  const Expr lambd = Num(v, n.dtype), neg = Num(-v, n.dtype);
  const Expr low = Op(Prim::kWhere, {Op(Prim::kLt, {x, neg}), Op(Prim::kAdd, {x, lambd}), Num(0, n.dtype)});
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {Op(Prim::kGt, {x, lambd}), Op(Prim::kSub, {x, lambd}), low}))};
}

/// xlogy(self, other): NaN where other is NaN, 0 where self == 0, else self log(other).
Outs Xlogy(CoreLowerer& l, const OpNode& n) {
  const Expr x = X(l, n), y = X(l, n, "other");
  const Expr value = Op(Prim::kWhere, {Op(Prim::kEq, {x, Num(0, n.dtype)}), Num(0, n.dtype), Op(Prim::kMul, {x, Op(Prim::kLog, {y})})});
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {Op(Prim::kIsNan, {y}), y, value}))};
}

/// A loss's element terms reduced as `reduction` says (0 none, 1 mean, 2 sum).
Outs Reduced(CoreLowerer& l, const OpNode& n, const std::vector<int64_t>& shape, const Expr& term) {
  const int terms = l.Compute(shape, n.dtype, term);
  const int64_t reduction = l.IntArg(n, "reduction", 1);
  if (reduction == 0) return {terms};
  std::vector<int> dims;
  for (size_t k = 0; k < shape.size(); ++k) dims.push_back(static_cast<int>(k));
  if (reduction == 2) return {ReduceDims(l, terms, dims, false, ReduceOp::kSum, n.dtype)};
  const int sum = ReduceDims(l, terms, dims, false, ReduceOp::kSum, n.dtype);
  return {l.Compute({}, n.dtype, Op(Prim::kDiv, {l.Read(sum, {}), Num(static_cast<double>(Numel(shape)), n.dtype)}))};
}

/// The broadcast shape of the loss's self and target.
std::vector<int64_t> LossShape(CoreLowerer& l, const OpNode& n) {
  const int a = l.Tensor(n, "self");
  return a < 0 ? std::vector<int64_t>{} : l.Def(a).shape;
}

Outs MseLoss(CoreLowerer& l, const OpNode& n) {
  const auto shape = LossShape(l, n);
  const Expr d = Op(Prim::kSub, {l.Operand(n, "self", shape, n.dtype), l.Operand(n, "target", shape, n.dtype)});
  return Reduced(l, n, shape, Op(Prim::kMul, {d, d}));
}

/// smooth_l1_loss(self, target, reduction, beta): 0.5 d^2 / beta below beta, else |d| - 0.5 beta.
/// huber_loss(self, target, reduction, delta): 0.5 d^2 below delta, else delta (|d| - 0.5 delta).
template <bool kHuber>
Outs RobustLoss(CoreLowerer& l, const OpNode& n) {
  const auto shape = LossShape(l, n);
  const DType dt = n.dtype;
  const double b = kHuber ? l.Number(n, "delta", 1) : l.Number(n, "beta", 1);
  const Expr d = Op(Prim::kAbs, {Op(Prim::kSub, {l.Operand(n, "self", shape, dt), l.Operand(n, "target", shape, dt)})});
  Expr quad = Op(Prim::kMul, {Num(0.5, dt), Op(Prim::kMul, {d, d})});
  if (!kHuber && b != 0) quad = Op(Prim::kDiv, {quad, Num(b, dt)});
  Expr lin = Op(Prim::kSub, {d, Num(0.5 * b, dt)});
  if (kHuber) lin = Op(Prim::kMul, {Num(b, dt), lin});
  return Reduced(l, n, shape, Op(Prim::kWhere, {Op(Prim::kLt, {d, Num(b, dt)}), quad, lin}));
}

/// nll_loss_forward(self [N, C] or [C], target, weight, reduction, ignore_index)
/// -> (output, total_weight).
Outs NllLoss(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self"), t = l.Tensor(n, "target");
  if (x < 0 || t < 0) return {};
  const auto xs = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const bool batched = xs.size() == 2;
  const int64_t C = xs.back(), N = batched ? xs[0] : 1;
  const int64_t ignore = l.IntArg(n, "ignore_index", -100);
  const int w = CoreLowerer::IsTensor(n, "weight") ? l.Tensor(n, "weight") : -1;
  const std::vector<Expr> at = batched ? std::vector<Expr>{Var(0)} : std::vector<Expr>{};
  const Expr cls = Cast(l.Read(t, at), DType::kInt64);
  const Expr valid = Op(Prim::kLogicalAnd, {Op(Prim::kNe, {cls, Int(ignore)}),
                                            Op(Prim::kLogicalAnd, {Op(Prim::kGe, {cls, Int(0)}), Op(Prim::kLt, {cls, Int(C)})})});
  const Expr weight = w >= 0 ? Cast(l.Read(w, {cls}, valid), dt) : Op(Prim::kWhere, {valid, Num(1, dt), Num(0, dt)});
  std::vector<Expr> xi = at;
  xi.push_back(cls);
  const Expr loss = Op(Prim::kNeg, {Op(Prim::kMul, {weight, l.Read(x, xi, valid)})});
  const std::vector<int64_t> shape = batched ? std::vector<int64_t>{N} : std::vector<int64_t>{};
  const int losses = l.Compute(shape, dt, loss);
  const int weights = l.Compute(shape, dt, weight);
  const int64_t reduction = l.IntArg(n, "reduction", 1);
  std::vector<int> dims;
  if (batched) dims = {0};
  const int total = batched ? ReduceDims(l, weights, dims, false, ReduceOp::kSum, dt) : weights;
  if (reduction == 0) return {losses, total};
  const int sum = batched ? ReduceDims(l, losses, dims, false, ReduceOp::kSum, dt) : losses;
  if (reduction == 2) return {sum, total};
  return {l.Compute({}, dt, Op(Prim::kDiv, {l.Read(sum, {}), l.Read(total, {})})), total};
}

const std::vector<LoweringRule> kRules = {
    {"aten.square.default", Square, "element: x * x"},
    {"aten.threshold.default", Threshold, "element: where(x > threshold, x, value)"},
    {"aten.celu.default", Celu, "element: where(x > 0, x, alpha expm1(x / alpha))"},
    {"aten.hardshrink.default", Hardshrink, "element: where(|x| > lambd, x, 0)"},
    {"aten.softshrink.default", Softshrink, "element: two wheres"},
    {"aten.xlogy.Tensor", Xlogy, "element: where chain, x log(y)"},
    {"aten.mse_loss.default", MseLoss, "element d^2, reduce sum (mean: div)"},
    {"aten.smooth_l1_loss.default", RobustLoss<false>, "element where, reduce sum (mean: div)"},
    {"aten.huber_loss.default", RobustLoss<true>, "element where, reduce sum (mean: div)"},
    {"aten.nll_loss_forward.default", NllLoss, "data-dependent read of the class, reduce sum / total weight"},
};

}  // namespace

const std::vector<LoweringRule>& KeptRules() { return kRules; }

}  // namespace kernelevolve::operators::ir
