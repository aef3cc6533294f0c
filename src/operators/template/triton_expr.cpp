#include "operators/template/triton_expr.h"

#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <optional>

namespace kernelevolve::operators::templates {
namespace {

/// What a Triton rule sees: operands resolved to Python text; first problem kept.
class TritonArgs {
 public:
  TritonArgs(const core::OpNode& node, const std::map<std::string, std::string>& vars)
      : node_(node), vars_(vars) {}
  std::string Operand(const std::string& name) {
    const core::OpArg* arg = node_.Arg(name);
    if (arg == nullptr) return Fail("missing argument '" + name + "'");
    if (arg->IsRef()) {
      auto it = vars_.find(arg->ref);
      return it == vars_.end() ? Fail("argument '" + name + "' refers to unknown node " + arg->ref)
                               : it->second;
    }
    if (arg->value.is_number() || arg->value.is_boolean()) return PythonFloat(Num(arg->value));
    return Fail("argument '" + name + "' is neither a tensor nor a number");
  }
  double Number(const std::string& name) {
    const core::OpArg* arg = node_.Arg(name);
    if (arg == nullptr || arg->IsRef() || !(arg->value.is_number() || arg->value.is_boolean())) {
      Fail("argument '" + name + "' must be a number");
      return 0;
    }
    return Num(arg->value);
  }
  std::optional<double> OptionalNumber(const std::string& name) {
    const core::OpArg* arg = node_.Arg(name);
    if (arg == nullptr || arg->value.is_null()) return std::nullopt;
    return Number(name);
  }
  std::string Text(const std::string& name) {
    const core::OpArg* arg = node_.Arg(name);
    if (arg == nullptr || !arg->value.is_string())
      return Fail("argument '" + name + "' must be a string");
    return arg->value.get<std::string>();
  }
  std::string Fail(const std::string& why) {
    if (error_.empty()) error_ = why;
    return "0.0";
  }
  const std::string& Error() const { return error_; }

 private:
  static double Num(const nlohmann::json& v) {
    return v.is_boolean() ? (v.get<bool>() ? 1.0 : 0.0) : v.get<double>();
  }
  const core::OpNode& node_;
  const std::map<std::string, std::string>& vars_;
  std::string error_;
};

using Rule = std::function<std::string(TritonArgs&)>;

std::string P(double v) { return PythonFloat(v); }
std::string Scaled(const std::string& a, double k) {
  return k == 1.0 ? a : "(" + a + " * " + P(k) + ")";
}
// tanh through the sigmoid (tl has no tanh outside libdevice): tanh z = 2 sigmoid(2z) - 1.
std::string Tanh(const std::string& z) { return "(2.0 * tl.sigmoid(2.0 * (" + z + ")) - 1.0)"; }
std::string Softplus(const std::string& z) { return "tl.log(1.0 + tl.exp(" + z + "))"; }
std::string Clamp01x6(const std::string& a) {
  return "tl.minimum(tl.maximum(" + a + " + 3.0, 0.0), 6.0)";
}

std::string Gelu(TritonArgs& c) {
  const auto a = c.Operand("self");
  const std::string mode = c.Text("approximate");
  if (mode == "none")
    return "0.5 * " + a + " * (1.0 + tl.math.erf(" + a + " * " + P(M_SQRT1_2) + "))";
  if (mode == "tanh") {
    const std::string inner = P(M_SQRT2 * M_2_SQRTPI * 0.5) + " * (" + a + " + " + P(0.044715) +
                              " * " + a + " * " + a + " * " + a + ")";
    return "0.5 * " + a + " * (1.0 + " + Tanh(inner) + ")";
  }
  return c.Fail("approximate='" + mode + "' is not 'none' or 'tanh'");
}

std::string PowScalar(TritonArgs& c) {
  const auto a = c.Operand("self");
  const double e = c.Number("exponent");
  if (e == 0.0) return a + " * 0.0 + 1.0";
  if (e == 1.0) return a;
  if (e == 2.0) return a + " * " + a;
  if (e == 3.0) return a + " * " + a + " * " + a;
  if (e == 0.5) return "tl.sqrt(" + a + ")";
  if (e == -1.0) return "1.0 / " + a;
  if (e == -0.5) return "tl.math.rsqrt(" + a + ")";
  return c.Fail(fmt::format("exponent {} has no Triton spelling yet", e));
}

std::string Xlogy(TritonArgs& c) {
  // torch.xlogy: 0 where x == 0 (even for y == 0), else x * log(y).
  const auto x = c.Operand("self");
  const auto y = c.Operand("other");
  return "tl.where(" + x + " == 0.0, 0.0, " + x + " * tl.log(" + y + "))";
}

std::string Clamp(TritonArgs& c) {
  std::string e = c.Operand("self");
  const auto lo = c.OptionalNumber("min");
  const auto hi = c.OptionalNumber("max");
  if (!lo && !hi) c.Fail("at least one of 'min' and 'max' must be a number");
  if (lo) e = "tl.maximum(" + e + ", " + P(*lo) + ")";
  if (hi) e = "tl.minimum(" + e + ", " + P(*hi) + ")";
  return e;
}

Rule Unary(const std::function<std::string(const std::string&)>& f) {
  return [f](TritonArgs& c) { return f(c.Operand("self")); };
}
Rule Binary(const std::string& op) {
  return [op](TritonArgs& c) { return c.Operand("self") + " " + op + " " + c.Operand("other"); };
}

const std::map<std::string, Rule>& Rules() {
  using S = const std::string&;
  static const std::map<std::string, Rule> kRules = {
      {"aten.relu.default", Unary([](S a) { return "tl.where(" + a + " < 0.0, 0.0, " + a + ")"; })},
      {"aten.leaky_relu.default",
       [](TritonArgs& c) {
         const auto a = c.Operand("self");
         return "tl.where(" + a + " > 0.0, " + a + ", " + a + " * " +
                P(c.Number("negative_slope")) + ")";
       }},
      {"aten.gelu.default", Gelu},
      {"aten.sigmoid.default", Unary([](S a) { return "tl.sigmoid(" + a + ")"; })},
      {"aten.tanh.default", Unary([](S a) { return Tanh(a); })},
      {"aten.silu.default", Unary([](S a) { return a + " * tl.sigmoid(" + a + ")"; })},
      {"aten.softplus.default",
       [](TritonArgs& c) {
         const auto a = c.Operand("self");
         const double beta = c.Number("beta");
         const std::string z = Scaled(a, beta);
         std::string soft = Softplus(z);
         if (beta != 1.0) soft += " / " + P(beta);
         return "tl.where(" + z + " > " + P(c.Number("threshold")) + ", " + a + ", " + soft + ")";
       }},
      {"aten.elu.default",
       [](TritonArgs& c) {
         const auto a = c.Operand("self");
         const double alpha = c.Number("alpha"), scale = c.Number("scale"),
                      in_scale = c.Number("input_scale");
         return "tl.where(" + a + " <= 0.0, (tl.exp(" + Scaled(a, in_scale) + ") - 1.0) * " +
                P(alpha * scale) + ", " + Scaled(a, scale) + ")";
       }},
      {"aten.celu.default",
       [](TritonArgs& c) {
         const auto a = c.Operand("self");
         const double alpha = c.Number("alpha");
         return "tl.where(" + a + " <= 0.0, (tl.exp(" + Scaled(a, 1.0 / alpha) + ") - 1.0) * " +
                P(alpha) + ", " + a + ")";
       }},
      {"aten.hardtanh.default",
       [](TritonArgs& c) {
         return "tl.minimum(tl.maximum(" + c.Operand("self") + ", " + P(c.Number("min_val")) +
                "), " + P(c.Number("max_val")) + ")";
       }},
      {"aten.hardsigmoid.default", Unary([](S a) { return Clamp01x6(a) + " / 6.0"; })},
      {"aten.hardswish.default", Unary([](S a) { return a + " * " + Clamp01x6(a) + " / 6.0"; })},
      {"aten.mish.default", Unary([](S a) { return a + " * " + Tanh(Softplus(a)); })},
      {"aten.threshold.default",
       [](TritonArgs& c) {
         const auto a = c.Operand("self");
         return "tl.where(" + a + " <= " + P(c.Number("threshold")) + ", " + P(c.Number("value")) +
                ", " + a + ")";
       }},
      {"aten.hardshrink.default",
       [](TritonArgs& c) {
         const auto a = c.Operand("self");
         const double l = c.Number("lambd");
         return "tl.where((" + a + " >= " + P(-l) + ") & (" + a + " <= " + P(l) + "), 0.0, " + a +
                ")";
       }},
      {"aten.softshrink.default",
       [](TritonArgs& c) {
         const auto a = c.Operand("self");
         const std::string l = P(c.Number("lambd"));
         return "tl.where(" + a + " > " + l + ", " + a + " - " + l + ", tl.where(" + a + " < -" +
                l + ", " + a + " + " + l + ", 0.0))";
       }},
      {"aten.abs.default", Unary([](S a) { return "tl.abs(" + a + ")"; })},
      {"aten.neg.default", Unary([](S a) { return "-" + a; })},
      {"aten.exp.default", Unary([](S a) { return "tl.exp(" + a + ")"; })},
      {"aten.expm1.default", Unary([](S a) { return "(tl.exp(" + a + ") - 1.0)"; })},
      {"aten.log.default", Unary([](S a) { return "tl.log(" + a + ")"; })},
      {"aten.log1p.default", Unary([](S a) { return "tl.log(1.0 + " + a + ")"; })},
      {"aten.erf.default", Unary([](S a) { return "tl.math.erf(" + a + ")"; })},
      {"aten.sqrt.default", Unary([](S a) { return "tl.sqrt(" + a + ")"; })},
      {"aten.rsqrt.default", Unary([](S a) { return "tl.math.rsqrt(" + a + ")"; })},
      {"aten.reciprocal.default", Unary([](S a) { return "1.0 / " + a; })},
      {"aten.square.default", Unary([](S a) { return a + " * " + a; })},
      {"aten.pow.Tensor_Scalar", PowScalar},
      {"aten.clone.default", Unary([](S a) { return a; })},
      {"aten.alias.default", Unary([](S a) { return a; })},
      {"aten.detach.default", Unary([](S a) { return a; })},
      {"aten.add.Tensor",
       [](TritonArgs& c) {
         return c.Operand("self") + " + " +
                Scaled(c.Operand("other"), c.OptionalNumber("alpha").value_or(1));
       }},
      {"aten.add.Scalar",
       [](TritonArgs& c) {
         return c.Operand("self") + " + " +
                Scaled(c.Operand("other"), c.OptionalNumber("alpha").value_or(1));
       }},
      {"aten.sub.Tensor",
       [](TritonArgs& c) {
         return c.Operand("self") + " - " +
                Scaled(c.Operand("other"), c.OptionalNumber("alpha").value_or(1));
       }},
      {"aten.sub.Scalar",
       [](TritonArgs& c) {
         return c.Operand("self") + " - " +
                Scaled(c.Operand("other"), c.OptionalNumber("alpha").value_or(1));
       }},
      {"aten.rsub.Tensor",
       [](TritonArgs& c) {
         return c.Operand("other") + " - " +
                Scaled(c.Operand("self"), c.OptionalNumber("alpha").value_or(1));
       }},
      {"aten.rsub.Scalar",
       [](TritonArgs& c) {
         return c.Operand("other") + " - " +
                Scaled(c.Operand("self"), c.OptionalNumber("alpha").value_or(1));
       }},
      {"aten.mul.Tensor", Binary("*")},
      {"aten.mul.Scalar", Binary("*")},
      {"aten.div.Tensor", Binary("/")},
      {"aten.div.Scalar", Binary("/")},
      {"aten.maximum.default",
       [](TritonArgs& c) {
         return "tl.maximum(" + c.Operand("self") + ", " + c.Operand("other") + ")";
       }},
      {"aten.minimum.default",
       [](TritonArgs& c) {
         return "tl.minimum(" + c.Operand("self") + ", " + c.Operand("other") + ")";
       }},
      {"aten.clamp.default", Clamp},
      {"aten.xlogy.Tensor", Xlogy},
      {"aten.clamp_min.default",
       [](TritonArgs& c) {
         return "tl.maximum(" + c.Operand("self") + ", " + P(c.Number("min")) + ")";
       }},
      {"aten.clamp_max.default",
       [](TritonArgs& c) {
         return "tl.minimum(" + c.Operand("self") + ", " + P(c.Number("max")) + ")";
       }},
      {"aten.gt.Tensor", Binary(">")},
      {"aten.gt.Scalar", Binary(">")},
      {"aten.ge.Tensor", Binary(">=")},
      {"aten.ge.Scalar", Binary(">=")},
      {"aten.lt.Tensor", Binary("<")},
      {"aten.lt.Scalar", Binary("<")},
      {"aten.le.Tensor", Binary("<=")},
      {"aten.le.Scalar", Binary("<=")},
      {"aten.eq.Tensor", Binary("==")},
      {"aten.eq.Scalar", Binary("==")},
      {"aten.ne.Tensor", Binary("!=")},
      {"aten.ne.Scalar", Binary("!=")},
      {"aten.where.self",
       [](TritonArgs& c) {
         return "tl.where(" + c.Operand("condition") + ", " + c.Operand("self") + ", " +
                c.Operand("other") + ")";
       }},
  };
  return kRules;
}

}  // namespace

std::string PythonFloat(double value) {
  if (std::isnan(value)) return "float('nan')";
  if (std::isinf(value)) return value > 0 ? "float('inf')" : "float('-inf')";
  std::string text = fmt::format("{}", static_cast<float>(value));
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return value < 0 ? "(" + text + ")" : text;
}

bool HasTritonRule(const std::string& target) { return Rules().count(target) > 0; }

std::string TritonElementwiseExpr(const core::OpNode& node,
                                  const std::map<std::string, std::string>& vars,
                                  std::string& error) {
  const auto rule = Rules().find(node.target);
  if (rule == Rules().end()) {
    error = "no Triton rule yet";
    return "";
  }
  TritonArgs args(node, vars);
  std::string rhs = rule->second(args);
  error = args.Error();
  return error.empty() ? rhs : "";
}

}  // namespace kernelevolve::operators::templates
