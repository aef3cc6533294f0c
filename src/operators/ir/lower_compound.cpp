// Compound ATen ops rewritten into IR primitives. Formulas follow PyTorch's CPU
// kernels / documentation (torch.nn.functional, aten/src/ATen/native/*Norm*.cpp,
// Loss.cpp): biased variance for the norms, nll_loss mean over non-ignored targets.
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <limits>

#include "operators/ir/lower_builder.h"
#include "operators/ir/lower_graph.h"

namespace kernelevolve::operators::ir {
namespace {

using core::OpNode;
using Inputs = std::map<std::string, int>;

double Num(Builder& b, const OpNode& n, const std::string& name, double fallback) {
  const core::OpArg* a = n.Arg(name);
  if (a == nullptr || a->IsRef() || a->value.is_null()) return fallback;
  if (a->value.is_number()) return a->value.get<double>();
  if (a->value.is_boolean()) return a->value.get<bool>() ? 1 : 0;
  if (a->value.is_string()) {
    const std::string s = a->value.get<std::string>();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  b.Fail(fmt::format("unsupported_op: {} (argument '{}' = {} is not a number)", n.target, name,
                     a->value.dump()));
  return fallback;
}

int Get(const Inputs& in, const std::string& name) {
  const auto it = in.find(name);
  return it == in.end() ? -1 : it->second;
}

/// The reduced dims of node argument `arg` over the operand, or false (b.Fail set).
bool Dims(Builder& b, const OpNode& n, int x, const std::string& arg, std::vector<int>& dims) {
  const core::OpArg* a = n.Arg(arg);
  const nlohmann::json value = a != nullptr ? a->value : nlohmann::json();
  if (!NormalizeDims(value, static_cast<int64_t>(b.At(x).shape.size()), dims)) {
    b.Fail(fmt::format("unsupported_op: {} (dim={} is not a valid dim list)", n.target,
                       value.dump()));
    return false;
  }
  return true;
}

bool Keep(const OpNode& n) {
  const core::OpArg* a = n.Arg("keepdim");
  return a != nullptr && a->value.is_boolean() && a->value.get<bool>();
}

bool NullDtype(Builder& b, const OpNode& n) {
  const core::OpArg* a = n.Arg("dtype");
  if (a != nullptr && !a->value.is_null()) {
    b.Fail("unsupported_op: " + n.target + " (dtype=" + a->value.dump() + ")");
    return false;
  }
  return true;
}

/// Squeezes a keepdim result when !keep.
int Squeeze(Builder& b, int keep_id, int source, const std::vector<int>& dims, bool keep) {
  if (keep) return keep_id;
  std::vector<int64_t> shape;
  const auto& full = b.At(source).shape;
  for (size_t d = 0; d < full.size(); ++d) {
    if (std::find(dims.begin(), dims.end(), static_cast<int>(d)) == dims.end()) {
      shape.push_back(full[d]);
    }
  }
  return b.View(keep_id, shape);
}

/// Values and first indices of the max (min) over one dim, keepdim.
std::pair<int, int> ArgExtreme(Builder& b, int x, int dim, bool max) {
  const int m = b.Reduce(max ? ReduceKind::kMax : ReduceKind::kMin, x, {dim}, true);
  const int hit = b.Ew("aten.eq.Tensor", {T("self", x), T("other", m)}, core::DType::kBool);
  const int iota = b.Iota(b.At(x).shape, dim);
  const double none = static_cast<double>(b.At(x).shape[static_cast<size_t>(dim)]);
  const int idx = b.Reduce(ReduceKind::kMin, b.WhereNum(hit, iota, none), {dim}, true);
  return {m, idx};
}

/// Applies a loss `reduction` (0 none, 1 mean, 2 sum) to elementwise losses.
int Reduction(Builder& b, const OpNode& n, int loss) {
  const int reduction = static_cast<int>(Num(b, n, "reduction", 1));
  if (reduction == 0) return loss;
  std::vector<int> all;
  for (size_t d = 0; d < b.At(loss).shape.size(); ++d) all.push_back(static_cast<int>(d));
  if (reduction == 1) return b.Mean(loss, all, false);
  return b.Reduce(ReduceKind::kSum, loss, all, false);
}

using Rule = std::function<std::vector<int>(Builder&, const OpNode&, const Inputs&)>;

std::vector<int> SumLike(Builder& b, const OpNode& n, const Inputs& in, bool mean) {
  const int x = Get(in, "self");
  std::vector<int> dims;
  if (!NullDtype(b, n) || !Dims(b, n, x, "dim", dims)) return {};
  return {mean ? b.Mean(x, dims, Keep(n)) : b.Reduce(ReduceKind::kSum, x, dims, Keep(n))};
}

std::vector<int> Extreme(Builder& b, const OpNode& n, const Inputs& in, ReduceKind kind) {
  const int x = Get(in, "self");
  std::vector<int> dims;
  if (!Dims(b, n, x, "dim", dims)) return {};
  return {b.Reduce(kind, x, dims, Keep(n))};
}

std::vector<int> MaxDim(Builder& b, const OpNode& n, const Inputs& in, bool max) {
  const int x = Get(in, "self");
  std::vector<int> dims;
  if (!Dims(b, n, x, "dim", dims)) return {};
  auto [m, idx] = ArgExtreme(b, x, dims.empty() ? 0 : dims[0], max);
  return {Squeeze(b, m, x, dims, Keep(n)), Squeeze(b, idx, x, dims, Keep(n))};
}

std::vector<int> ArgMax(Builder& b, const OpNode& n, const Inputs& in, bool max) {
  int x = Get(in, "self");
  const core::OpArg* dim = n.Arg("dim");
  if (dim == nullptr || dim->value.is_null()) {  // index into the flattened tensor
    x = b.View(x, {Numel(b.At(x).shape)});
    auto [m, idx] = ArgExtreme(b, x, 0, max);
    return {b.View(idx, Keep(n) ? std::vector<int64_t>(b.At(Get(in, "self")).shape.size(), 1)
                                : std::vector<int64_t>{})};
  }
  std::vector<int> dims;
  if (!Dims(b, n, x, "dim", dims)) return {};
  auto [m, idx] = ArgExtreme(b, x, dims.empty() ? 0 : dims[0], max);
  return {Squeeze(b, idx, x, dims, Keep(n))};
}

std::vector<int> VectorNorm(Builder& b, const OpNode& n, const Inputs& in) {
  const int x = Get(in, "self");
  std::vector<int> dims;
  if (!NullDtype(b, n) || !Dims(b, n, x, "dim", dims)) return {};
  const double p = Num(b, n, "ord", 2);
  const bool keep = Keep(n);
  const int ax = b.Unary("aten.abs.default", x);
  if (std::isinf(p)) return {b.Reduce(p > 0 ? ReduceKind::kMax : ReduceKind::kMin, ax, dims, keep)};
  if (p == 1) return {b.Reduce(ReduceKind::kSum, ax, dims, keep)};
  if (p == 2) {
    const int sq = b.Binary("aten.mul.Tensor", x, x);
    return {b.Unary("aten.sqrt.default", b.Reduce(ReduceKind::kSum, sq, dims, keep))};
  }
  if (p == 0) {
    const int nz = b.Ew("aten.ne.Scalar", {T("self", x), C("other", 0)}, core::DType::kBool);
    const int one = b.WhereNum(nz, b.Ew("aten.add.Scalar", {T("self", ax), C("other", 1)}), 0);
    const int ones = b.Scalar("aten.clamp_max.default", one, 1);  // 1 where x != 0
    return {b.Reduce(ReduceKind::kSum, ones, dims, keep)};
  }
  const int pw = b.Ew("aten.pow.Tensor_Scalar", {T("self", ax), C("exponent", p)});
  const int s = b.Reduce(ReduceKind::kSum, pw, dims, keep);
  return {b.Ew("aten.pow.Tensor_Scalar", {T("self", s), C("exponent", 1.0 / p)})};
}

std::vector<int> VarStd(Builder& b, const OpNode& n, const Inputs& in, bool std_dev) {
  const int x = Get(in, "self");
  std::vector<int> dims;
  if (!Dims(b, n, x, "dim", dims)) return {};
  double correction = Num(b, n, "correction", 1);
  const core::OpArg* unbiased = n.Arg("unbiased");
  if (unbiased != nullptr && unbiased->value.is_boolean()) {
    correction = unbiased->value.get<bool>() ? 1 : 0;
  }
  int v = b.Variance(x, dims, correction, nullptr);
  if (std_dev) v = b.Unary("aten.sqrt.default", v);
  return {Squeeze(b, v, x, dims, Keep(n))};
}

std::vector<int> Softmax(Builder& b, const OpNode& n, const Inputs& in, bool log) {
  const int x = Get(in, "self");
  std::vector<int> dims;
  if (!Dims(b, n, x, "dim", dims)) return {};
  const core::OpArg* half = n.Arg("half_to_float");
  if (half != nullptr && half->value.is_boolean() && half->value.get<bool>()) {
    b.Fail("unsupported_op: " + n.target + " (half_to_float=true)");
    return {};
  }
  const int m = b.Reduce(ReduceKind::kMax, x, dims, true);
  const int z = b.Binary("aten.sub.Tensor", x, m);
  const int e = b.Unary("aten.exp.default", z);
  const int s = b.Reduce(ReduceKind::kSum, e, dims, true);
  if (log) return {b.Binary("aten.sub.Tensor", z, b.Unary("aten.log.default", s))};
  return {b.Binary("aten.div.Tensor", e, s)};
}

/// y = (x - mean) * rstd [* w] [+ b]; returns {y, mean, rstd} (keepdim shapes).
std::vector<int> Normalize(Builder& b, int x, const std::vector<int>& dims, double eps, int w,
                           int bias) {
  int mean = -1;
  const int var = b.Variance(x, dims, 0, &mean);
  const int rstd = b.Unary("aten.rsqrt.default", b.Scalar("aten.add.Tensor", var, eps));
  int y = b.Binary("aten.mul.Tensor", b.Binary("aten.sub.Tensor", x, mean), rstd);
  if (w >= 0) y = b.Binary("aten.mul.Tensor", y, w);
  if (bias >= 0) y = b.Binary("aten.add.Tensor", y, bias);
  return {y, mean, rstd};
}

std::vector<int> LayerNorm(Builder& b, const OpNode& n, const Inputs& in) {
  const int x = Get(in, "input");
  const core::OpArg* ns = n.Arg("normalized_shape");
  const size_t rank = b.At(x).shape.size();
  const size_t k = ns != nullptr && ns->value.is_array() ? ns->value.size() : 0;
  if (k == 0 || k > rank) {
    b.Fail("unsupported_op: " + n.target + " (normalized_shape is not a non-empty list)");
    return {};
  }
  std::vector<int> dims;
  for (size_t d = rank - k; d < rank; ++d) dims.push_back(static_cast<int>(d));
  return Normalize(b, x, dims, Num(b, n, "eps", 1e-5), Get(in, "weight"), Get(in, "bias"));
}

std::vector<int> GroupNorm(Builder& b, const OpNode& n, const Inputs& in) {
  const int x = Get(in, "input");
  const auto shape = b.At(x).shape;
  const int64_t batch = static_cast<int64_t>(Num(b, n, "N", 0));
  const int64_t c = static_cast<int64_t>(Num(b, n, "C", 0));
  const int64_t hw = static_cast<int64_t>(Num(b, n, "HxW", 0));
  const int64_t g = static_cast<int64_t>(Num(b, n, "group", 1));
  if (g <= 0 || c % g != 0 || batch * c * hw != Numel(shape)) {
    b.Fail("unsupported_op: " + n.target + " (N, C, HxW, group do not match the input)");
    return {};
  }
  const std::vector<int64_t> grouped = {batch, g, c / g, hw};
  const int xv = b.View(x, grouped);
  int w = Get(in, "weight");
  int bias = Get(in, "bias");
  if (w >= 0) w = b.View(w, {g, c / g, 1});
  if (bias >= 0) bias = b.View(bias, {g, c / g, 1});
  auto out = Normalize(b, xv, {2, 3}, Num(b, n, "eps", 1e-5), w, bias);
  return {b.View(out[0], shape), b.View(out[1], {batch, g}), b.View(out[2], {batch, g})};
}

std::vector<int> BatchNorm(Builder& b, const OpNode& n, const Inputs& in, bool legit_eval) {
  const int x = Get(in, "input");
  const auto shape = b.At(x).shape;
  if (shape.size() < 2) {
    b.Fail("unsupported_op: " + n.target + " (input has fewer than 2 dims)");
    return {};
  }
  std::vector<int64_t> param(shape.size() - 1, 1);
  param[0] = shape[1];
  auto view = [&](int id) { return id >= 0 ? b.View(id, param) : -1; };
  const int w = view(Get(in, "weight"));
  const int bias = view(Get(in, "bias"));
  const bool training = !legit_eval && Num(b, n, "training", 0) != 0;
  const double eps = Num(b, n, "eps", 1e-5);
  if (!training) {
    const int mean = view(Get(in, "running_mean"));
    const int var = view(Get(in, "running_var"));
    if (mean < 0 || var < 0) {
      b.Fail("unsupported_op: " + n.target + " (inference without running statistics)");
      return {};
    }
    const int rstd = b.Unary("aten.rsqrt.default", b.Scalar("aten.add.Tensor", var, eps));
    int y = b.Binary("aten.mul.Tensor", b.Binary("aten.sub.Tensor", x, mean), rstd);
    if (w >= 0) y = b.Binary("aten.mul.Tensor", y, w);
    if (bias >= 0) y = b.Binary("aten.add.Tensor", y, bias);
    return {y, -1, -1};
  }
  std::vector<int> dims = {0};
  for (size_t d = 2; d < shape.size(); ++d) dims.push_back(static_cast<int>(d));
  auto out = Normalize(b, x, dims, eps, w, bias);
  return {out[0], b.View(out[1], {shape[1]}), b.View(out[2], {shape[1]})};
}

std::vector<int> PairLoss(Builder& b, const OpNode& n, const Inputs& in, const std::string& kind) {
  const int d = b.Binary("aten.sub.Tensor", Get(in, "self"), Get(in, "target"));
  int loss = -1;
  if (kind == "mse") {
    loss = b.Binary("aten.mul.Tensor", d, d);
  } else {
    const int ad = b.Unary("aten.abs.default", d);
    const double k = Num(b, n, kind == "huber" ? "delta" : "beta", 1.0);
    if (kind == "smooth_l1" && k == 0) {
      loss = ad;
    } else {
      const int small = b.Ew("aten.lt.Scalar", {T("self", ad), C("other", k)}, core::DType::kBool);
      int quad = b.Scalar("aten.mul.Tensor", b.Binary("aten.mul.Tensor", ad, ad), 0.5);
      int lin = b.Scalar("aten.sub.Tensor", ad, 0.5 * k);
      if (kind == "huber") {
        lin = b.Scalar("aten.mul.Tensor", lin, k);
      } else {
        quad = b.Scalar("aten.div.Tensor", quad, k);
      }
      loss = b.Ew("aten.where.self", {T("condition", small), T("self", quad), T("other", lin)});
    }
  }
  return {Reduction(b, n, loss)};
}

std::vector<int> NllLoss(Builder& b, const OpNode& n, const Inputs& in) {
  const int x = Get(in, "self");
  const int target = Get(in, "target");
  if (Get(in, "weight") >= 0 || b.At(x).shape.size() != 2 || target < 0) {
    b.Fail("unsupported_op: " + n.target + " (only [N, C] input, [N] targets, no class weight)");
    return {};
  }
  const auto shape = b.At(x).shape;
  const double ignore = Num(b, n, "ignore_index", -100);
  const int t = b.View(target, {shape[0], 1});
  const int hit = b.Ew("aten.eq.Tensor", {T("self", b.Iota(shape, 1)), T("other", t)},
                       core::DType::kBool);
  const int picked = b.Reduce(ReduceKind::kSum, b.WhereNum(hit, x, 0), {1}, false);
  const int valid = b.Ew("aten.ne.Scalar", {T("self", target), C("other", ignore)},
                         core::DType::kBool);
  const int loss = b.WhereNum(valid, b.Unary("aten.neg.default", picked), 0);
  const int reduction = static_cast<int>(Num(b, n, "reduction", 1));
  const int weight = b.Reduce(ReduceKind::kSum,
                              b.Ew("aten.where.self", {T("condition", valid), C("self", 1.0),
                                                       C("other", 0.0)}),
                              {0}, false);
  if (reduction == 0) return {loss, weight};
  const int total = b.Reduce(ReduceKind::kSum, loss, {0}, false);
  if (reduction == 2) return {total, weight};
  return {b.Binary("aten.div.Tensor", total, weight), weight};
}

std::vector<int> Xlogy(Builder& b, const OpNode&, const Inputs& in) {
  const int a = Get(in, "self");
  const int zero = b.Ew("aten.eq.Scalar", {T("self", a), C("other", 0)}, core::DType::kBool);
  const int prod = b.Binary("aten.mul.Tensor", a, b.Unary("aten.log.default", Get(in, "other")));
  return {b.Ew("aten.where.self", {T("condition", zero), C("self", 0.0), T("other", prod)})};
}

const std::map<std::string, Rule>& Rules() {
  using B = Builder;
  using N = OpNode;
  using I = Inputs;
  static const std::map<std::string, Rule> kRules = {
      {"aten.sum.dim_IntList", [](B& b, const N& n, const I& in) { return SumLike(b, n, in, false); }},
      {"aten.sum.default", [](B& b, const N& n, const I& in) { return SumLike(b, n, in, false); }},
      {"aten.mean.dim", [](B& b, const N& n, const I& in) { return SumLike(b, n, in, true); }},
      {"aten.mean.default", [](B& b, const N& n, const I& in) { return SumLike(b, n, in, true); }},
      {"aten.amax.default", [](B& b, const N& n, const I& in) { return Extreme(b, n, in, ReduceKind::kMax); }},
      {"aten.amin.default", [](B& b, const N& n, const I& in) { return Extreme(b, n, in, ReduceKind::kMin); }},
      {"aten.max.default", [](B& b, const N& n, const I& in) { return Extreme(b, n, in, ReduceKind::kMax); }},
      {"aten.min.default", [](B& b, const N& n, const I& in) { return Extreme(b, n, in, ReduceKind::kMin); }},
      {"aten.prod.dim_int", [](B& b, const N& n, const I& in) {
         return NullDtype(b, n) ? Extreme(b, n, in, ReduceKind::kProd) : std::vector<int>{}; }},
      {"aten.prod.default", [](B& b, const N& n, const I& in) {
         return NullDtype(b, n) ? Extreme(b, n, in, ReduceKind::kProd) : std::vector<int>{}; }},
      {"aten.max.dim", [](B& b, const N& n, const I& in) { return MaxDim(b, n, in, true); }},
      {"aten.min.dim", [](B& b, const N& n, const I& in) { return MaxDim(b, n, in, false); }},
      {"aten.argmax.default", [](B& b, const N& n, const I& in) { return ArgMax(b, n, in, true); }},
      {"aten.argmin.default", [](B& b, const N& n, const I& in) { return ArgMax(b, n, in, false); }},
      {"aten.linalg_vector_norm.default", VectorNorm},
      {"aten.var.correction", [](B& b, const N& n, const I& in) { return VarStd(b, n, in, false); }},
      {"aten.std.correction", [](B& b, const N& n, const I& in) { return VarStd(b, n, in, true); }},
      {"aten.var.dim", [](B& b, const N& n, const I& in) { return VarStd(b, n, in, false); }},
      {"aten.std.dim", [](B& b, const N& n, const I& in) { return VarStd(b, n, in, true); }},
      {"aten._softmax.default", [](B& b, const N& n, const I& in) { return Softmax(b, n, in, false); }},
      {"aten.softmax.int", [](B& b, const N& n, const I& in) { return Softmax(b, n, in, false); }},
      {"aten._log_softmax.default", [](B& b, const N& n, const I& in) { return Softmax(b, n, in, true); }},
      {"aten.log_softmax.int", [](B& b, const N& n, const I& in) { return Softmax(b, n, in, true); }},
      {"aten.native_layer_norm.default", LayerNorm},
      {"aten.native_group_norm.default", GroupNorm},
      {"aten.native_batch_norm.default", [](B& b, const N& n, const I& in) { return BatchNorm(b, n, in, false); }},
      {"aten._native_batch_norm_legit_no_training.default",
       [](B& b, const N& n, const I& in) { return BatchNorm(b, n, in, true); }},
      {"aten.mse_loss.default", [](B& b, const N& n, const I& in) { return PairLoss(b, n, in, "mse"); }},
      {"aten.smooth_l1_loss.default", [](B& b, const N& n, const I& in) { return PairLoss(b, n, in, "smooth_l1"); }},
      {"aten.huber_loss.default", [](B& b, const N& n, const I& in) { return PairLoss(b, n, in, "huber"); }},
      {"aten.nll_loss_forward.default", NllLoss},
      {"aten.xlogy.Tensor", Xlogy},
  };
  return kRules;
}

}  // namespace

bool IsCompoundTarget(const std::string& target) { return Rules().count(target) > 0; }

bool LowerCompound(Builder& b, const core::OpNode& node, const Inputs& in,
                   std::vector<int>& outputs) {
  const auto it = Rules().find(OutOfPlace(node.target));
  if (it == Rules().end()) return false;
  for (const auto& a : node.args) {
    if (a.IsRef() && in.at(a.name) >= 0 && b.At(in.at(a.name)).dtype != core::DType::kFloat32 &&
        !(a.name == "target" && node.target.find("nll_loss") != std::string::npos)) {
      b.Fail(fmt::format("unsupported_dtype: {} argument '{}' is {}", node.target, a.name,
                         core::DTypeName(b.At(in.at(a.name)).dtype)));
      return true;
    }
  }
  outputs = it->second(b, node, in);
  if (outputs.empty() && b.Error().empty()) b.Fail("unsupported_op: " + node.target);
  return true;
}

}  // namespace kernelevolve::operators::ir
