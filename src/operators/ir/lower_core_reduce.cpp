// Core ATen lowering rules for reductions, scans and the normalizations built from
// them (softmax, log_softmax, logsumexp, layer / group / batch norm, var / std).
// Each reduction is one reduce definition over any set of dims; its consumers read it
// broadcast, so a norm is a few reductions and one element-wise definition.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "operators/ir/core_lowerer.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;
using V = std::vector<Expr>;
using Outs = std::vector<int>;

bool IsFloat(DType d) { return core::IsFloatingPoint(d); }

/// Reads keepdim-shaped `def` broadcast at the indices of an op of `shape`.
Expr ReadKeep(CoreLowerer& l, int def, const std::vector<int64_t>& shape) { return l.ReadBroadcast(def, shape); }

/// A def whose body is `body` over x's shape, cast to `dtype` (for reductions' inputs).
int ElementOf(CoreLowerer& l, const std::vector<int64_t>& shape, DType dtype, const Expr& body) {
  return l.Compute(shape, dtype, body);
}

Outs SumLike(CoreLowerer& l, const OpNode& n, ReduceOp op) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const std::string dim_arg = n.Arg("dim") != nullptr ? "dim" : "";
  std::vector<int> dims = dim_arg.empty() ? DimList(l, n, "__none__", s.size()) : DimList(l, n, "dim", s.size());
  const bool keepdim = l.IntArg(n, "keepdim", 0) != 0;
  DType dt = n.dtype;
  if (op == ReduceOp::kAny || op == ReduceOp::kAll) dt = DType::kBool;
  int src = x;
  if (l.Def(x).dtype != dt) src = ElementOf(l, s, dt, Cast(l.Read(x, IndexVars(s.size())), dt));
  return {ReduceDims(l, src, dims, keepdim, op, n.dtype)};
}

template <ReduceOp kOp>
Outs Reduction(CoreLowerer& l, const OpNode& n) {
  return SumLike(l, n, kOp);
}

Outs Mean(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  std::vector<int> dims = n.Arg("dim") != nullptr ? DimList(l, n, "dim", s.size()) : DimList(l, n, "__none__", s.size());
  const bool keepdim = l.IntArg(n, "keepdim", 0) != 0;
  int src = x;
  if (l.Def(x).dtype != n.dtype) src = ElementOf(l, s, n.dtype, Cast(l.Read(x, IndexVars(s.size())), n.dtype));
  const int sum = ReduceDims(l, src, dims, keepdim, ReduceOp::kSum, n.dtype);
  int64_t count = 1;
  for (int d : dims) count *= s[static_cast<size_t>(d)];
  const auto shape = l.Def(sum).shape;
  return {l.Compute(shape, n.dtype, Op(Prim::kDiv, {l.Read(sum, IndexVars(shape.size())), Constant(static_cast<double>(count), n.dtype)}))};
}

/// max.dim / min.dim: (values, indices).
template <bool kMax>
Outs MaxMinDim(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const int d = l.NormDim(l.IntArg(n, "dim"), s.size());
  const bool keepdim = l.IntArg(n, "keepdim", 0) != 0;
  const int values = ReduceDims(l, x, {d}, keepdim, kMax ? ReduceOp::kMax : ReduceOp::kMin, l.Def(x).dtype);
  const int indices = ReduceDims(l, x, {d}, keepdim, kMax ? ReduceOp::kArgMax : ReduceOp::kArgMin, DType::kInt64);
  return {values, indices};
}

/// argmax / argmin(self, dim, keepdim); dim None: over the flattened tensor.
template <bool kMax>
Outs ArgMaxMin(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const auto dim = CoreLowerer::Value(n, "dim");
  const bool keepdim = l.IntArg(n, "keepdim", 0) != 0;
  std::vector<int> dims;
  if (dim.is_null()) {
    for (size_t k = 0; k < s.size(); ++k) dims.push_back(static_cast<int>(k));
  } else {
    dims = {l.NormDim(dim.get<int64_t>(), s.size())};
  }
  return {ReduceDims(l, x, dims, keepdim && !dim.is_null(), kMax ? ReduceOp::kArgMax : ReduceOp::kArgMin, DType::kInt64)};
}

/// var / std (correction, or unbiased), var_mean / std_mean.
template <bool kStd, bool kWithMean>
Outs Variance(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const std::vector<int> dims = DimList(l, n, "dim", s.size());
  double correction = 1;
  if (n.Arg("correction") != nullptr && !CoreLowerer::Value(n, "correction").is_null()) {
    correction = l.Number(n, "correction", 1);
  } else if (n.Arg("unbiased") != nullptr) {
    correction = l.IntArg(n, "unbiased", 1) != 0 ? 1 : 0;
  }
  const bool keepdim = l.IntArg(n, "keepdim", 0) != 0;
  int mean = -1;
  int var = VarianceKeep(l, x, dims, correction, &mean);
  std::vector<int64_t> out_shape;
  for (size_t k = 0; k < s.size(); ++k) {
    const bool reduced = std::find(dims.begin(), dims.end(), static_cast<int>(k)) != dims.end();
    if (!reduced || keepdim) out_shape.push_back(reduced ? 1 : s[k]);
  }
  auto squeeze = [&](int def, bool root) {
    const auto ks = l.Def(def).shape;
    // out vars map onto the keepdim shape's kept dims.
    V index(ks.size(), Int(0));
    int o = 0;
    for (size_t k = 0; k < ks.size(); ++k) {
      const bool reduced = std::find(dims.begin(), dims.end(), static_cast<int>(k)) != dims.end();
      if (!reduced) index[k] = Var(o++);
      else if (keepdim) o++;
    }
    Expr v = l.Read(def, index);
    if (root) v = Op(Prim::kSqrt, {v});
    return l.Compute(out_shape, n.dtype, v);
  };
  Outs outs = {squeeze(var, kStd)};
  if (kWithMean) outs.push_back(squeeze(mean, false));
  return outs;
}

/// linalg_vector_norm(self, ord, dim, keepdim, dtype).
Outs VectorNorm(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const std::vector<int> dims = DimList(l, n, "dim", s.size());
  const bool keepdim = l.IntArg(n, "keepdim", 0) != 0;
  const double ord = l.Number(n, "ord", 2);
  const DType dt = n.dtype;
  const Expr a = Op(Prim::kAbs, {Cast(l.Read(x, IndexVars(s.size())), dt)});
  if (std::isinf(ord)) {
    const int abs = l.Compute(s, dt, a);
    return {ReduceDims(l, abs, dims, keepdim, ord > 0 ? ReduceOp::kMax : ReduceOp::kMin, dt)};
  }
  Expr term = a;
  if (ord == 0) term = Cast(Op(Prim::kNe, {a, Constant(0, dt)}), dt);
  else if (ord == 2) term = Op(Prim::kMul, {a, a});
  else if (ord != 1) term = Op(Prim::kPow, {a, Constant(ord, dt)});
  const int sum = ReduceDims(l, l.Compute(s, dt, term), dims, keepdim, ReduceOp::kSum, dt);
  const auto shape = l.Def(sum).shape;
  Expr v = l.Read(sum, IndexVars(shape.size()));
  if (ord == 2) v = Op(Prim::kSqrt, {v});
  else if (ord != 1 && ord != 0) v = Op(Prim::kPow, {v, Constant(1.0 / ord, dt)});
  return {l.Compute(shape, dt, v)};
}

/// _softmax / _log_softmax(self, dim, half_to_float): exp(x - max) / sum.
template <bool kLog>
Outs Softmax(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const int d = l.NormDim(l.IntArg(n, "dim"), s.size());
  const DType dt = n.dtype;
  int src = x;
  if (l.Def(x).dtype != dt) src = l.Compute(s, dt, l.Read(x, IndexVars(s.size())));
  const int m = ReduceDims(l, src, {d}, true, ReduceOp::kMax, dt);
  const Expr shifted = Op(Prim::kSub, {l.Read(src, IndexVars(s.size())), ReadKeep(l, m, s)});
  const int e = l.Compute(s, dt, Op(Prim::kExp, {shifted}));
  const int sum = ReduceDims(l, e, {d}, true, ReduceOp::kSum, dt);
  if (kLog) return {l.Compute(s, dt, Op(Prim::kSub, {shifted, Op(Prim::kLog, {ReadKeep(l, sum, s)})}))};
  return {l.Compute(s, dt, Op(Prim::kDiv, {l.Read(e, IndexVars(s.size())), ReadKeep(l, sum, s)}))};
}

}  // namespace

Expr ZeroWhereInfinite(const Expr& x, core::DType dt) {
  return Op(Prim::kWhere, {Op(Prim::kIsInf, {x}), Constant(0, dt), x});
}

namespace {

/// logsumexp(self, dim, keepdim): log(sum(exp(x - m))) + m, m = max (0 where infinite).
Outs LogSumExp(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const std::vector<int> dims = DimList(l, n, "dim", s.size());
  const bool keepdim = l.IntArg(n, "keepdim", 0) != 0;
  const DType dt = n.dtype;
  int src = x;
  if (l.Def(x).dtype != dt) src = l.Compute(s, dt, l.Read(x, IndexVars(s.size())));
  const int m = ReduceDims(l, src, dims, true, ReduceOp::kMax, dt);
  const auto ks = l.Def(m).shape;
  const Expr mk = l.Read(m, IndexVars(ks.size()));
  const int safe = l.Compute(ks, dt, ZeroWhereInfinite(mk, dt));
  const int e = l.Compute(s, dt, Op(Prim::kExp, {Op(Prim::kSub, {l.Read(src, IndexVars(s.size())), ReadKeep(l, safe, s)})}));
  const int sum = ReduceDims(l, e, dims, true, ReduceOp::kSum, dt);
  const int lse = l.Compute(ks, dt, Op(Prim::kAdd, {Op(Prim::kLog, {l.Read(sum, IndexVars(ks.size()))}), l.Read(safe, IndexVars(ks.size()))}));
  if (keepdim) return {lse};
  V index(ks.size(), Int(0));
  int o = 0;
  for (size_t k = 0; k < ks.size(); ++k) {
    if (std::find(dims.begin(), dims.end(), static_cast<int>(k)) == dims.end()) index[k] = Var(o++);
  }
  return {l.Compute(n.shape, dt, l.Read(lse, index))};
}

/// (x - mean) * rstd * weight + bias with weight / bias read by `affine_index`.
Expr Normalize(CoreLowerer& l, const Expr& x, const Expr& mean, const Expr& rstd, int weight, int bias,
               const V& affine_index) {
  Expr y = Op(Prim::kMul, {Op(Prim::kSub, {x, mean}), rstd});
  if (weight >= 0) y = Op(Prim::kMul, {y, Cast(l.Read(weight, affine_index), x->dtype)});
  if (bias >= 0) y = Op(Prim::kAdd, {y, Cast(l.Read(bias, affine_index), x->dtype)});
  return y;
}

int OptionalTensor(CoreLowerer& l, const OpNode& n, const std::string& name) {
  return CoreLowerer::IsTensor(n, name) ? l.Tensor(n, name) : -1;
}

/// native_layer_norm(input, normalized_shape, weight, bias, eps) -> (out, mean, rstd).
Outs LayerNorm(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "input");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const size_t norm_rank = l.IntList(n, "normalized_shape").size();
  std::vector<int> dims;
  for (size_t k = s.size() - norm_rank; k < s.size(); ++k) dims.push_back(static_cast<int>(k));
  int mean = -1;
  const int var = VarianceKeep(l, x, dims, 0, &mean);
  const auto ks = l.Def(var).shape;
  const DType dt = l.Def(x).dtype;
  const int rstd = l.Compute(ks, dt, Op(Prim::kRsqrt, {Op(Prim::kAdd, {l.Read(var, IndexVars(ks.size())), Constant(l.Number(n, "eps", 1e-5), dt)})}));
  V affine;
  for (int d : dims) affine.push_back(Var(d));
  const Expr y = Normalize(l, l.Read(x, IndexVars(s.size())), ReadKeep(l, mean, s), ReadKeep(l, rstd, s),
                           OptionalTensor(l, n, "weight"), OptionalTensor(l, n, "bias"), affine);
  return {l.Compute(s, dt, y), mean, rstd};
}

/// native_group_norm(input, weight, bias, N, C, HxW, group, eps) -> (out, mean, rstd).
Outs GroupNorm(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "input");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const int64_t N = s[0], C = s.size() > 1 ? s[1] : 1, G = l.IntArg(n, "group", 1);
  const int64_t D = Numel(s) / std::max<int64_t>(N * G, 1);
  const DType dt = l.Def(x).dtype;
  const std::vector<int64_t> grouped = {N, G, D};
  const int xv = l.Compute(grouped, dt, l.Read(x, Unflatten(FlatOffset(IndexVars(3), grouped), s)));
  int mean = -1;
  const int var = VarianceKeep(l, xv, {2}, 0, &mean);  // [N, G, 1]
  const int rstd3 = l.Compute({N, G, 1}, dt, Op(Prim::kRsqrt, {Op(Prim::kAdd, {l.Read(var, IndexVars(3)), Constant(l.Number(n, "eps", 1e-5), dt)})}));
  const Expr g = IFloorDiv(Var(1), C / std::max<int64_t>(G, 1));
  const Expr y = Normalize(l, l.Read(x, IndexVars(s.size())), l.Read(mean, {Var(0), g, Int(0)}),
                           l.Read(rstd3, {Var(0), g, Int(0)}), OptionalTensor(l, n, "weight"),
                           OptionalTensor(l, n, "bias"), {Var(1)});
  const int out = l.Compute(s, dt, y);
  const int mean2 = l.Compute({N, G}, dt, l.Read(mean, {Var(0), Var(1), Int(0)}));
  const int rstd2 = l.Compute({N, G}, dt, l.Read(rstd3, {Var(0), Var(1), Int(0)}));
  return {out, mean2, rstd2};
}

/// _native_batch_norm_legit_no_training(input, weight, bias, running_mean,
/// running_var, momentum, eps) -> (out, [0], [0]); the channel is dim 1.
Outs BatchNormEval(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "input");
  const int rm = l.Tensor(n, "running_mean"), rv = l.Tensor(n, "running_var");
  if (x < 0 || rm < 0 || rv < 0) return {};
  const auto s = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const V c = {s.size() > 1 ? Var(1) : Int(0)};
  const Expr rstd = Op(Prim::kRsqrt, {Op(Prim::kAdd, {Cast(l.Read(rv, c), dt), Constant(l.Number(n, "eps", 1e-5), dt)})});
  const Expr y = Normalize(l, l.Read(x, IndexVars(s.size())), Cast(l.Read(rm, c), dt), rstd,
                           OptionalTensor(l, n, "weight"), OptionalTensor(l, n, "bias"), c);
  const int out = l.Compute(s, dt, y);
  const int empty1 = l.Compute({0}, dt, Constant(0, dt));
  const int empty2 = l.Compute({0}, dt, Constant(0, dt));
  return {out, empty1, empty2};
}

/// _native_batch_norm_legit(input, weight, bias, running_mean, running_var,
/// training, momentum, eps) with batch statistics -> (out, save_mean, save_rstd).
/// The running statistics are not updated (the captured graph reads them only).
Outs BatchNormTrain(CoreLowerer& l, const OpNode& n) {
  if (l.IntArg(n, "training", 1) == 0) return BatchNormEval(l, n);
  const int x = l.Tensor(n, "input");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  std::vector<int> dims;
  for (size_t k = 0; k < s.size(); ++k) {
    if (k != 1) dims.push_back(static_cast<int>(k));
  }
  int mean = -1;
  const int var = VarianceKeep(l, x, dims, 0, &mean);
  const auto ks = l.Def(var).shape;
  const int rstd = l.Compute(ks, dt, Op(Prim::kRsqrt, {Op(Prim::kAdd, {l.Read(var, IndexVars(ks.size())), Constant(l.Number(n, "eps", 1e-5), dt)})}));
  const Expr y = Normalize(l, l.Read(x, IndexVars(s.size())), ReadKeep(l, mean, s), ReadKeep(l, rstd, s),
                           OptionalTensor(l, n, "weight"), OptionalTensor(l, n, "bias"), {Var(1)});
  V c(ks.size(), Int(0));
  c[1] = Var(0);
  const int64_t C = s[1];
  return {l.Compute(s, dt, y), l.Compute({C}, dt, l.Read(mean, c)), l.Compute({C}, dt, l.Read(rstd, c))};
}

/// cumsum / cumprod(self, dim, dtype).
template <ScanOp kOp>
Outs Cumulative(CoreLowerer& l, const OpNode& n) {
  const int x = l.Tensor(n, "self");
  if (x < 0) return {};
  const auto s = l.Def(x).shape;
  const int d = l.NormDim(l.IntArg(n, "dim"), s.size());
  return {l.Scan(s, n.dtype, s.empty() ? 0 : d, kOp, Cast(l.Read(x, IndexVars(s.size())), n.dtype))};
}

const std::vector<LoweringRule> kRules = {
    {"aten.sum.dim_IntList", Reduction<ReduceOp::kSum>, "reduce sum over the dims"},
    {"aten.sum.default", Reduction<ReduceOp::kSum>, "reduce sum over every dim"},
    {"aten.prod.dim_int", Reduction<ReduceOp::kProd>, "reduce prod over the dim"},
    {"aten.prod.default", Reduction<ReduceOp::kProd>, "reduce prod over every dim"},
    {"aten.amax.default", Reduction<ReduceOp::kMax>, "reduce max (NaN propagates)"},
    {"aten.amin.default", Reduction<ReduceOp::kMin>, "reduce min (NaN propagates)"},
    {"aten.max.default", Reduction<ReduceOp::kMax>, "reduce max over every dim"},
    {"aten.min.default", Reduction<ReduceOp::kMin>, "reduce min over every dim"},
    {"aten.any.default", Reduction<ReduceOp::kAny>, "reduce any (bool)"},
    {"aten.any.dim", Reduction<ReduceOp::kAny>, "reduce any (bool)"},
    {"aten.any.dims", Reduction<ReduceOp::kAny>, "reduce any (bool)"},
    {"aten.all.default", Reduction<ReduceOp::kAll>, "reduce all (bool)"},
    {"aten.all.dim", Reduction<ReduceOp::kAll>, "reduce all (bool)"},
    {"aten.all.dims", Reduction<ReduceOp::kAll>, "reduce all (bool)"},
    {"aten.mean.dim", Mean, "reduce sum, then div by the count"},
    {"aten.mean.default", Mean, "reduce sum, then div by the count"},
    {"aten.max.dim", MaxMinDim<true>, "reduce max and reduce argmax"},
    {"aten.min.dim", MaxMinDim<false>, "reduce min and reduce argmin"},
    {"aten.argmax.default", ArgMaxMin<true>, "reduce argmax (first maximum, NaN first)"},
    {"aten.argmin.default", ArgMaxMin<false>, "reduce argmin (first minimum, NaN first)"},
    {"aten.var.correction", Variance<false, false>, "reduce mean, reduce sum of squared deviations"},
    {"aten.var.dim", Variance<false, false>, "reduce mean, reduce sum of squared deviations"},
    {"aten.std.correction", Variance<true, false>, "as var, then sqrt"},
    {"aten.std.dim", Variance<true, false>, "as var, then sqrt"},
    {"aten.var_mean.correction", Variance<false, true>, "as var; the mean too"},
    {"aten.std_mean.correction", Variance<true, true>, "as std; the mean too"},
    {"aten.linalg_vector_norm.default", VectorNorm, "reduce sum of |x|^p (max / min for inf)"},
    {"aten._softmax.default", Softmax<false>, "reduce max, reduce sum of exp, div"},
    {"aten.softmax.int", Softmax<false>, "reduce max, reduce sum of exp, div"},
    {"aten.log_softmax.int", Softmax<true>, "reduce max, reduce sum of exp, sub log"},
    {"aten._log_softmax.default", Softmax<true>, "reduce max, reduce sum of exp, sub log"},
    {"aten.logsumexp.default", LogSumExp, "reduce max, reduce sum of exp, log + max"},
    {"aten.native_layer_norm.default", LayerNorm, "reduce mean and variance, normalize"},
    {"aten.native_group_norm.default", GroupNorm, "reduce mean and variance per group, normalize"},
    {"aten._native_batch_norm_legit_no_training.default", BatchNormEval, "element: running statistics"},
    {"aten._native_batch_norm_legit.default", BatchNormTrain, "reduce batch mean and variance per channel"},
    {"aten._native_batch_norm_legit.no_stats", BatchNormTrain, "reduce batch mean and variance per channel"},
    {"aten.native_batch_norm.default", BatchNormTrain, "running statistics (eval) or batch statistics (training)"},
    {"aten._native_batch_norm_legit_functional.default", BatchNormTrain, "reduce batch mean and variance per channel"},
    {"aten.cumsum.default", Cumulative<ScanOp::kSum>, "scan sum along the dim"},
    {"aten.cumprod.default", Cumulative<ScanOp::kProd>, "scan prod along the dim"},
};

}  // namespace

const std::vector<LoweringRule>& ReductionRules() { return kRules; }

Expr ExtremeValue(DType dt, bool lowest) {
  if (core::IsFloatingPoint(dt)) return Constant(lowest ? -INFINITY : INFINITY, dt);
  if (dt == DType::kBool || dt == DType::kUInt8) return Int(lowest ? 0 : (dt == DType::kBool ? 1 : 255), dt);
  const int bits = static_cast<int>(core::DTypeSize(dt) * 8);
  if (bits == 64) {
    return Int(lowest ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max(), dt);
  }
  return Int(lowest ? -(int64_t{1} << (bits - 1)) : (int64_t{1} << (bits - 1)) - 1, dt);
}

std::vector<int> DimList(CoreLowerer& l, const OpNode& n, const std::string& name, size_t rank) {
  std::vector<int> dims;
  const auto v = CoreLowerer::Value(n, name);
  std::set<int> unique;
  if (v.is_null() || (v.is_array() && v.empty())) {
    for (size_t k = 0; k < rank; ++k) unique.insert(static_cast<int>(k));
  } else {
    for (int64_t d : l.IntList(n, name)) unique.insert(l.NormDim(d, rank));
  }
  if (rank == 0) unique.clear();
  return {unique.begin(), unique.end()};
}

int ReduceDims(CoreLowerer& l, int x, const std::vector<int>& dims, bool keepdim, ReduceOp op, DType dtype) {
  const auto s = l.Def(x).shape;
  std::vector<int64_t> out_shape, extents;
  V index(s.size());
  int o = 0;
  // Output vars first (in output order), then the reduce vars.
  for (size_t k = 0; k < s.size(); ++k) {
    const bool reduced = std::find(dims.begin(), dims.end(), static_cast<int>(k)) != dims.end();
    if (!reduced) {
      out_shape.push_back(s[k]);
      index[k] = Var(o++);
    } else if (keepdim) {
      out_shape.push_back(1);
      o++;
    }
  }
  int r = o;
  for (size_t k = 0; k < s.size(); ++k) {
    if (std::find(dims.begin(), dims.end(), static_cast<int>(k)) == dims.end()) continue;
    extents.push_back(s[k]);
    index[k] = Var(r++);
  }
  return l.Reduce(out_shape, dtype, extents, op, l.Read(x, index));
}

int MeanKeep(CoreLowerer& l, int x, const std::vector<int>& dims) {
  const auto s = l.Def(x).shape;
  const DType dt = l.Def(x).dtype;
  const int sum = ReduceDims(l, x, dims, true, ReduceOp::kSum, dt);
  int64_t count = 1;
  for (int d : dims) count *= s[static_cast<size_t>(d)];
  const auto ks = l.Def(sum).shape;
  return l.Compute(ks, dt, Op(Prim::kDiv, {l.Read(sum, IndexVars(ks.size())), Constant(static_cast<double>(count), dt)}));
}

int VarianceKeep(CoreLowerer& l, int x, const std::vector<int>& dims, double correction, int* mean_out) {
  const auto s = l.Def(x).shape;
  const DType dt = IsFloat(l.Def(x).dtype) ? l.Def(x).dtype : DType::kFloat32;
  const int mean = MeanKeep(l, x, dims);
  *mean_out = mean;
  const Expr dev = Op(Prim::kSub, {Cast(l.Read(x, IndexVars(s.size())), dt), l.ReadBroadcast(mean, s)});
  const int sq = l.Compute(s, dt, Op(Prim::kMul, {dev, dev}));
  const int sum = ReduceDims(l, sq, dims, true, ReduceOp::kSum, dt);
  int64_t count = 1;
  for (int d : dims) count *= s[static_cast<size_t>(d)];
  const auto ks = l.Def(sum).shape;
  const double denom = std::max(static_cast<double>(count) - correction, 0.0);
  return l.Compute(ks, dt, Op(Prim::kDiv, {l.Read(sum, IndexVars(ks.size())), Constant(denom, dt)}));
}

}  // namespace kernelevolve::operators::ir
