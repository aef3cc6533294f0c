#include "operators/template/pointwise_rules.h"

#include <fmt/format.h>

#include <cmath>

// Formulas follow PyTorch's definitions (torch.nn.functional documentation and ATen's
// CPU kernels in aten/src/ATen/native/cpu/Activation.cpp, UnaryOpsKernel.cpp):
// NaN propagates wherever PyTorch propagates it, comparisons are ordered as there.
namespace kernelevolve::operators::templates {

const core::OpArg* RuleContext::Need(const std::string& name) {
  const core::OpArg* arg = node_.Arg(name);
  if (arg == nullptr) Fail("argument '" + name + "' is missing");
  return arg;
}

std::string RuleContext::Operand(const std::string& name) {
  const core::OpArg* arg = Need(name);
  if (arg == nullptr) return "0.0f";
  if (arg->IsRef()) {
    const auto it = vars_.find(arg->ref);
    if (it != vars_.end()) return it->second;
    Fail("argument '" + name + "' refers to '" + arg->ref + "', which is not an elementwise value");
    return "0.0f";
  }
  if (arg->value.is_number() || arg->value.is_boolean()) return FloatLiteral(Number(name));
  Fail("argument '" + name + "' = " + arg->value.dump() + " is neither a tensor nor a number");
  return "0.0f";
}

double RuleContext::Number(const std::string& name) {
  const core::OpArg* arg = Need(name);
  if (arg == nullptr) return 0;
  if (!arg->IsRef() && arg->value.is_boolean()) return arg->value.get<bool>() ? 1 : 0;
  if (!arg->IsRef() && arg->value.is_number()) return arg->value.get<double>();
  Fail("argument '" + name + "' must be a number, got " +
       (arg->IsRef() ? "tensor '" + arg->ref + "'" : arg->value.dump()));
  return 0;
}

std::optional<double> RuleContext::OptionalNumber(const std::string& name) {
  const core::OpArg* arg = node_.Arg(name);
  if (arg == nullptr || (!arg->IsRef() && arg->value.is_null())) return std::nullopt;
  return Number(name);
}

std::string RuleContext::Text(const std::string& name) {
  const core::OpArg* arg = Need(name);
  if (arg != nullptr && !arg->IsRef() && arg->value.is_string())
    return arg->value.get<std::string>();
  if (arg != nullptr) Fail("argument '" + name + "' must be a string");
  return "";
}

namespace {

bool Prelude(MathFlavor f) { return f == MathFlavor::kPrelude || f == MathFlavor::kPreludeAvx512; }

}  // namespace

std::string RuleContext::Exp(const std::string& a) const {
  return (Prelude(flavor_) ? "ke_exp(" : "std::exp(") + a + ")";
}
std::string RuleContext::Expm1(const std::string& a) const {
  return (Prelude(flavor_) ? "ke_expm1(" : "std::expm1(") + a + ")";
}
std::string RuleContext::Log(const std::string& a) const {
  if (flavor_ == MathFlavor::kPreludeAvx512) return "ke_log_v16(" + a + ")";
  return (Prelude(flavor_) ? "ke_log(" : "std::log(") + a + ")";
}
std::string RuleContext::Log1p(const std::string& a) const {
  return (Prelude(flavor_) ? "ke_log1p(" : "std::log1p(") + a + ")";
}
std::string RuleContext::Tanh(const std::string& a) const {
  return (Prelude(flavor_) ? "ke_tanh(" : "std::tanh(") + a + ")";
}
std::string RuleContext::Erf(const std::string& a) const {
  return (Prelude(flavor_) ? "ke_erf(" : "std::erf(") + a + ")";
}
std::string RuleContext::Sigmoid(const std::string& a) const {
  return Prelude(flavor_) ? "ke_sigmoid(" + a + ")" : "1.0f / (1.0f + std::exp(-" + a + "))";
}
std::string RuleContext::Softplus(const std::string& a) const {
  return Prelude(flavor_) ? "ke_softplus(" + a + ")" : "std::log1p(std::exp(" + a + "))";
}

std::string RuleContext::Select(const std::string& cond, const std::string& a,
                                const std::string& b) const {
  if (Prelude(flavor_)) return "ke_select(" + cond + ", " + a + ", " + b + ")";
  return cond + " ? " + a + " : " + b;
}

namespace {

/// `e * k`, or `e` when k == 1.
std::string Scaled(const std::string& e, double k) {
  return k == 1.0 ? e : e + " * " + FloatLiteral(k);
}

std::string Self(RuleContext& c) { return c.Operand("self"); }

// ---- activations ------------------------------------------------------------
std::string Relu(RuleContext& c) {
  const auto a = Self(c);
  return a + " < 0.0f ? 0.0f : " + a;  // keeps NaN, as torch.relu does
}
std::string LeakyRelu(RuleContext& c) {
  const auto a = Self(c);
  return a + " > 0.0f ? " + a + " : " + a + " * " + FloatLiteral(c.Number("negative_slope"));
}
std::string Gelu(RuleContext& c) {
  const auto a = Self(c);
  const std::string mode = c.Text("approximate");
  if (mode == "none") {  // x/2 * (1 + erf(x / sqrt(2)))
    return "0.5f * " + a + " * (1.0f + " + c.Erf(a + " * " + FloatLiteral(M_SQRT1_2)) + ")";
  }
  if (mode == "tanh") {  // x/2 * (1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3)))
    const std::string inner = FloatLiteral(M_SQRT2 * M_2_SQRTPI * 0.5) + " * (" + a + " + " +
                              FloatLiteral(0.044715) + " * " + a + " * " + a + " * " + a + ")";
    return "0.5f * " + a + " * (1.0f + " + c.Tanh(inner) + ")";
  }
  c.Fail("approximate='" + mode + "' is not 'none' or 'tanh'");
  return "";
}
std::string Sigmoid(RuleContext& c) { return c.Sigmoid(Self(c)); }
std::string Tanh(RuleContext& c) { return c.Tanh(Self(c)); }
std::string Silu(RuleContext& c) {
  const auto a = Self(c);
  return a + " / (1.0f + " + c.Exp("-" + a) + ")";
}
std::string Softplus(RuleContext& c) {  // x*beta > threshold ? x : log1p(exp(x*beta)) / beta
  const auto a = Self(c);
  const double beta = c.Number("beta");
  const std::string z = Scaled(a, beta);
  std::string soft = c.Softplus(z);
  if (beta != 1.0) soft += " / " + FloatLiteral(beta);
  return c.Select(z + " > " + FloatLiteral(c.Number("threshold")), a, soft);
}
std::string Elu(RuleContext& c) {  // x <= 0 ? expm1(x*input_scale) * alpha*scale : x*scale
  const auto a = Self(c);
  const double alpha = c.Number("alpha");
  const double scale = c.Number("scale");
  const double input_scale = c.Number("input_scale");
  return c.Select(a + " <= 0.0f", Scaled(c.Expm1(Scaled(a, input_scale)), alpha * scale),
                  Scaled(a, scale));
}
std::string Celu(RuleContext& c) {  // elu(x, alpha, scale=1, input_scale=1/alpha)
  const auto a = Self(c);
  const double alpha = c.Number("alpha");
  return c.Select(a + " <= 0.0f", Scaled(c.Expm1(Scaled(a, 1.0 / alpha)), alpha), a);
}
std::string Hardtanh(RuleContext& c) {
  const auto a = Self(c);
  return "std::min(std::max(" + a + ", " + FloatLiteral(c.Number("min_val")) + "), " +
         FloatLiteral(c.Number("max_val")) + ")";
}
std::string Hardsigmoid(RuleContext& c) {  // min(max(x + 3, 0), 6) / 6
  return "std::min(std::max(" + Self(c) + " + 3.0f, 0.0f), 6.0f) / 6.0f";
}
std::string Hardswish(RuleContext& c) {  // x * min(max(x + 3, 0), 6) / 6
  const auto a = Self(c);
  return a + " * std::min(std::max(" + a + " + 3.0f, 0.0f), 6.0f) / 6.0f";
}
std::string Mish(RuleContext& c) {  // x * tanh(softplus(x))
  const auto a = Self(c);
  return a + " * " + c.Tanh(c.Softplus(a));
}
std::string Threshold(RuleContext& c) {  // x <= threshold ? value : x
  const auto a = Self(c);
  return a + " <= " + FloatLiteral(c.Number("threshold")) + " ? " +
         FloatLiteral(c.Number("value")) + " : " + a;
}
std::string Hardshrink(RuleContext& c) {
  const auto a = Self(c);
  const double l = c.Number("lambd");
  return "(" + a + " >= " + FloatLiteral(-l) + " && " + a + " <= " + FloatLiteral(l) +
         ") ? 0.0f : " + a;
}
std::string Softshrink(RuleContext& c) {
  const auto a = Self(c);
  const std::string l = FloatLiteral(c.Number("lambd"));
  return a + " > " + l + " ? " + a + " - " + l + " : (" + a + " < -" + l + " ? " + a + " + " + l +
         " : 0.0f)";
}

// ---- unary math -------------------------------------------------------------
std::string Abs(RuleContext& c) { return "std::fabs(" + Self(c) + ")"; }
std::string Neg(RuleContext& c) { return "-" + Self(c); }
std::string Exp(RuleContext& c) { return c.Exp(Self(c)); }
std::string Expm1(RuleContext& c) { return c.Expm1(Self(c)); }
std::string Log(RuleContext& c) { return c.Log(Self(c)); }
std::string Log1p(RuleContext& c) { return c.Log1p(Self(c)); }
std::string Erf(RuleContext& c) { return c.Erf(Self(c)); }
std::string Sqrt(RuleContext& c) { return "std::sqrt(" + Self(c) + ")"; }
std::string Rsqrt(RuleContext& c) { return "1.0f / std::sqrt(" + Self(c) + ")"; }
std::string Reciprocal(RuleContext& c) { return "1.0f / " + Self(c); }
std::string Square(RuleContext& c) {
  const auto a = Self(c);
  return a + " * " + a;
}
std::string Identity(RuleContext& c) { return Self(c); }
std::string PowScalar(RuleContext& c) {
  const auto a = Self(c);
  const double e = c.Number("exponent");
  if (e == 0.0) return "1.0f";
  if (e == 1.0) return a;
  if (e == 2.0) return a + " * " + a;
  if (e == 3.0) return a + " * " + a + " * " + a;
  if (e == 0.5) return "std::sqrt(" + a + ")";
  if (e == -1.0) return "1.0f / " + a;
  if (e == -0.5) return "1.0f / std::sqrt(" + a + ")";
  return "std::pow(" + a + ", " + FloatLiteral(e) + ")";
}

// ---- binary arithmetic (other: tensor or scalar; alpha scales other) ---------
std::string Add(RuleContext& c) {
  return Self(c) + " + " + Scaled(c.Operand("other"), c.OptionalNumber("alpha").value_or(1));
}
std::string Sub(RuleContext& c) {
  return Self(c) + " - " + Scaled(c.Operand("other"), c.OptionalNumber("alpha").value_or(1));
}
std::string Rsub(RuleContext& c) {  // other - alpha * self
  const auto a = Self(c);
  return c.Operand("other") + " - " + Scaled(a, c.OptionalNumber("alpha").value_or(1));
}
std::string Mul(RuleContext& c) { return Self(c) + " * " + c.Operand("other"); }
std::string Div(RuleContext& c) { return Self(c) + " / " + c.Operand("other"); }
std::string Maximum(RuleContext& c) {  // NaN in either operand gives NaN
  const auto a = Self(c);
  const auto b = c.Operand("other");
  return "(" + a + " > " + b + " || " + a + " != " + a + ") ? " + a + " : " + b;
}
std::string Minimum(RuleContext& c) {
  const auto a = Self(c);
  const auto b = c.Operand("other");
  return "(" + a + " < " + b + " || " + a + " != " + a + ") ? " + a + " : " + b;
}
std::string Clamp(RuleContext& c) {  // min(max(x, lo), hi); keeps NaN, hi wins when lo > hi
  std::string e = Self(c);
  const auto lo = c.OptionalNumber("min");
  const auto hi = c.OptionalNumber("max");
  if (!lo && !hi) c.Fail("at least one of 'min' and 'max' must be a number");
  if (lo) e = "std::max(" + e + ", " + FloatLiteral(*lo) + ")";
  if (hi) e = "std::min(" + e + ", " + FloatLiteral(*hi) + ")";
  return e;
}
std::string ClampMin(RuleContext& c) {
  return "std::max(" + Self(c) + ", " + FloatLiteral(c.Number("min")) + ")";
}
std::string ClampMax(RuleContext& c) {
  return "std::min(" + Self(c) + ", " + FloatLiteral(c.Number("max")) + ")";
}

// ---- comparisons and selection ----------------------------------------------
template <const char* kOp>
std::string Compare(RuleContext& c) {
  return Self(c) + " " + kOp + " " + c.Operand("other");
}
constexpr char kGt[] = ">", kGe[] = ">=", kLt[] = "<", kLe[] = "<=", kEq[] = "==", kNe[] = "!=";
std::string Where(RuleContext& c) {
  return c.Operand("condition") + " ? " + Self(c) + " : " + c.Operand("other");
}

const std::map<std::string, PointwiseRule>& Rules() {
  static const std::map<std::string, PointwiseRule> kRules = {
      {"aten.relu.default", {Relu}},
      {"aten.leaky_relu.default", {LeakyRelu}},
      {"aten.gelu.default", {Gelu}},
      {"aten.sigmoid.default", {Sigmoid}},
      {"aten.tanh.default", {Tanh}},
      {"aten.silu.default", {Silu}},
      {"aten.softplus.default", {Softplus}},
      {"aten.elu.default", {Elu}},
      {"aten.celu.default", {Celu}},
      {"aten.hardtanh.default", {Hardtanh}},
      {"aten.hardsigmoid.default", {Hardsigmoid}},
      {"aten.hardswish.default", {Hardswish}},
      {"aten.mish.default", {Mish}},
      {"aten.threshold.default", {Threshold}},
      {"aten.hardshrink.default", {Hardshrink}},
      {"aten.softshrink.default", {Softshrink}},
      {"aten.abs.default", {Abs}},
      {"aten.neg.default", {Neg}},
      {"aten.exp.default", {Exp}},
      {"aten.expm1.default", {Expm1}},
      {"aten.log.default", {Log}},
      {"aten.log1p.default", {Log1p}},
      {"aten.erf.default", {Erf}},
      {"aten.sqrt.default", {Sqrt}},
      {"aten.rsqrt.default", {Rsqrt}},
      {"aten.reciprocal.default", {Reciprocal}},
      {"aten.square.default", {Square}},
      {"aten.pow.Tensor_Scalar", {PowScalar}},
      {"aten.clone.default", {Identity}},
      {"aten.alias.default", {Identity}},
      {"aten.detach.default", {Identity}},
      {"aten.add.Tensor", {Add}},
      {"aten.add.Scalar", {Add}},
      {"aten.sub.Tensor", {Sub}},
      {"aten.sub.Scalar", {Sub}},
      {"aten.rsub.Tensor", {Rsub}},
      {"aten.rsub.Scalar", {Rsub}},
      {"aten.mul.Tensor", {Mul}},
      {"aten.mul.Scalar", {Mul}},
      {"aten.div.Tensor", {Div}},
      {"aten.div.Scalar", {Div}},
      {"aten.maximum.default", {Maximum}},
      {"aten.minimum.default", {Minimum}},
      {"aten.clamp.default", {Clamp}},
      {"aten.clamp_min.default", {ClampMin}},
      {"aten.clamp_max.default", {ClampMax}},
      {"aten.gt.Tensor", {Compare<kGt>, true}},
      {"aten.gt.Scalar", {Compare<kGt>, true}},
      {"aten.ge.Tensor", {Compare<kGe>, true}},
      {"aten.ge.Scalar", {Compare<kGe>, true}},
      {"aten.lt.Tensor", {Compare<kLt>, true}},
      {"aten.lt.Scalar", {Compare<kLt>, true}},
      {"aten.le.Tensor", {Compare<kLe>, true}},
      {"aten.le.Scalar", {Compare<kLe>, true}},
      {"aten.eq.Tensor", {Compare<kEq>, true}},
      {"aten.eq.Scalar", {Compare<kEq>, true}},
      {"aten.ne.Tensor", {Compare<kNe>, true}},
      {"aten.ne.Scalar", {Compare<kNe>, true}},
      {"aten.where.self", {Where}},
  };
  return kRules;
}

}  // namespace

const PointwiseRule* FindPointwiseRule(const std::string& target) {
  const auto it = Rules().find(target);
  return it == Rules().end() ? nullptr : &it->second;
}

}  // namespace kernelevolve::operators::templates
