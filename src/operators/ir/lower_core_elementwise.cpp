// Core ATen lowering rules for element-wise ops: arithmetic, float math,
// comparisons, logic, bits, selects, casts, creation, and the compound activations
// decomposed into primitives once (gelu, silu, mish, softplus, ...).
#include <cmath>
#include <numbers>

#include "operators/ir/core_lowerer.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;
using core::OpNode;
using V = std::vector<Expr>;
using Outs = std::vector<int>;

bool IsFloat(DType d) { return core::IsFloatingPoint(d); }

int Category(DType d) { return d == DType::kBool ? 0 : (IsFloat(d) ? 2 : 1); }

/// The dtype of argument `name`: a tensor's, or a Python scalar's (bool, int64, float32).
DType ArgDtype(CoreLowerer& l, const OpNode& n, const std::string& name, bool* is_tensor) {
  *is_tensor = CoreLowerer::IsTensor(n, name);
  if (*is_tensor) {
    const int t = l.Tensor(n, name);
    return t < 0 ? DType::kFloat32 : l.Def(t).dtype;
  }
  const auto v = CoreLowerer::Value(n, name);
  if (v.is_boolean()) return DType::kBool;
  if (v.is_number_integer()) return DType::kInt64;
  return DType::kFloat32;
}

/// torch's type promotion of two operands (a scalar only raises the category).
DType Promote(CoreLowerer& l, const OpNode& n, const std::string& a, const std::string& b) {
  bool ta = false, tb = false;
  const DType da = ArgDtype(l, n, a, &ta), db = ArgDtype(l, n, b, &tb);
  if (Category(da) != Category(db)) {
    const bool a_wins = Category(da) > Category(db);
    const DType winner = a_wins ? da : db;
    const bool winner_tensor = a_wins ? ta : tb;
    if (winner_tensor) return winner;
    return Category(winner) == 2 ? DType::kFloat32 : DType::kInt64;
  }
  if (ta && tb) return core::DTypeSize(da) >= core::DTypeSize(db) ? da : db;
  return ta ? da : db;
}

Expr Sigmoid(const Expr& x) { return Op(Prim::kSigmoid, {x}); }
Expr Num(double v, DType d) { return Constant(v, d); }

/// y = f(x) of the node's `self`, computed in the node's dtype.
template <Prim P>
Outs Unary(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  const Expr x = l.Operand(n, "self", n.shape, dt);
  const bool rounding = P == Prim::kFloor || P == Prim::kCeil || P == Prim::kRound || P == Prim::kTrunc;
  if (rounding && !IsFloat(dt)) return {l.Compute(n.shape, dt, x)};
  return {l.Compute(n.shape, dt, Op(P, {x}, dt))};
}

/// isnan / isinf: bool, false for integers.
template <Prim P>
Outs Test(CoreLowerer& l, const OpNode& n) {
  const int t = l.Tensor(n, "self");
  if (t < 0) return {};
  if (!IsFloat(l.Def(t).dtype)) return {l.Compute(n.shape, DType::kBool, Bool(false))};
  return {l.Compute(n.shape, DType::kBool, Op(P, {l.ReadBroadcast(t, n.shape)}))};
}

/// z = self OP other in the node's dtype (arithmetic) or the promoted dtype (compare).
template <Prim P>
Outs Binary(CoreLowerer& l, const OpNode& n) {
  const std::string other = n.Arg("other") != nullptr ? "other" : "exponent";
  const bool compare = Info(P).cls == PrimClass::kCompare;
  const DType dt = compare ? Promote(l, n, "self", other) : n.dtype;
  const Expr a = l.Operand(n, "self", n.shape, dt);
  const Expr b = l.Operand(n, other, n.shape, dt);
  if (Info(P).cls == PrimClass::kFloatMath && !IsFloat(dt)) {
    l.Unsupported(n, "float math on an integer result");
    return {};
  }
  return {l.Compute(n.shape, n.dtype, Op(P, {a, b}, dt))};
}

/// logical_*: operands as bool.
template <Prim P>
Outs Logical(CoreLowerer& l, const OpNode& n) {
  V args;
  for (const char* name : {"self", "other"}) {
    if (n.Arg(name) == nullptr) continue;
    args.push_back(l.Operand(n, name, n.shape, DType::kBool));
  }
  return {l.Compute(n.shape, n.dtype, Op(P, args, DType::kBool))};
}

/// bitwise_*: logic on bool, bits on integers.
template <Prim P, Prim BoolP>
Outs Bitwise(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  if (IsFloat(dt)) {
    l.Unsupported(n, "bitwise op on a float tensor");
    return {};
  }
  V args;
  for (const char* name : {"self", "other"}) {
    if (n.Arg(name) == nullptr) continue;
    args.push_back(l.Operand(n, name, n.shape, dt));
  }
  return {l.Compute(n.shape, dt, Op(dt == DType::kBool ? BoolP : P, args, dt))};
}

/// add / sub with alpha: self +- alpha * other.
template <Prim P>
Outs AddSub(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  const Expr a = l.Operand(n, "self", n.shape, dt);
  Expr b = l.Operand(n, "other", n.shape, dt);
  const double alpha = l.Number(n, "alpha", 1);
  if (alpha != 1) b = Op(Prim::kMul, {b, Num(alpha, dt)});
  return {l.Compute(n.shape, dt, Op(P, {a, b}))};
}

/// rsub: other - alpha * self.
Outs Rsub(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  Expr a = l.Operand(n, "self", n.shape, dt);
  const Expr b = l.Operand(n, "other", n.shape, dt);
  const double alpha = l.Number(n, "alpha", 1);
  if (alpha != 1) a = Op(Prim::kMul, {a, Num(alpha, dt)});
  return {l.Compute(n.shape, dt, Op(Prim::kSub, {b, a}))};
}

/// Floor division of floats as eager computes it (c10::div_floor_floating, c10/util/
/// generic_math.h, after CPython's float floor division): (a - fmod(a, b)) / b, one
/// less where the remainder and b differ in sign, then floored and rounded up where the
/// quotient lies more than 0.5 below it; zero carries the sign of a / b, and b == 0
/// gives a / b. floor(a / b) differs: 1.0 // 0.1 is 9 there (a / b rounds to 10) and
/// inf // 2 is NaN (the remainder of inf is NaN), not inf.
Expr FloorDivFloating(const Expr& a, const Expr& b, DType dt) {
  const Expr zero = Num(0, dt);
  const Expr mod = Op(Prim::kFmod, {a, b});
  const Expr exact = Op(Prim::kDiv, {Op(Prim::kSub, {a, mod}), b});
  const Expr signs_differ = Op(Prim::kLogicalAnd, {Op(Prim::kNe, {mod, zero}),
                                                   Op(Prim::kLogicalXor, {Op(Prim::kLt, {b, zero}),
                                                                          Op(Prim::kLt, {mod, zero})})});
  const Expr quotient = Op(Prim::kWhere, {signs_differ, Op(Prim::kSub, {exact, Num(1, dt)}), exact});
  const Expr floored = Op(Prim::kFloor, {quotient});
  const Expr fixed = Op(Prim::kWhere, {Op(Prim::kGt, {Op(Prim::kSub, {quotient, floored}), Num(0.5, dt)}),
                                       Op(Prim::kAdd, {floored, Num(1, dt)}), floored});
  // copysign(0, a / b): |a / b| < 1 here, so multiplying it by 0 keeps its sign.
  const Expr true_div = Op(Prim::kDiv, {a, b});
  const Expr signed_zero = Op(Prim::kMul, {true_div, zero});
  const Expr result = Op(Prim::kWhere, {Op(Prim::kEq, {quotient, zero}), signed_zero, fixed});
  return Op(Prim::kWhere, {Op(Prim::kEq, {b, zero}), true_div, result});
}

/// div with rounding_mode None (true division), "trunc" or "floor".
Outs Div(CoreLowerer& l, const OpNode& n) {
  const auto mode = CoreLowerer::Value(n, "rounding_mode");
  const std::string m = mode.is_string() ? mode.get<std::string>() : "";
  const DType dt = n.dtype;
  const Expr a = l.Operand(n, "self", n.shape, dt);
  const Expr b = l.Operand(n, "other", n.shape, dt);
  if (!IsFloat(dt)) {
    if (m.empty()) {
      l.Unsupported(n, "true division with an integer result");
      return {};
    }
    return {l.Compute(n.shape, dt, Op(m == "floor" ? Prim::kFloorDiv : Prim::kDiv, {a, b}))};
  }
  if (m == "floor") return {l.Compute(n.shape, dt, FloorDivFloating(a, b, dt))};
  Expr q = Op(Prim::kDiv, {a, b});
  if (m == "trunc") q = Op(Prim::kTrunc, {q});
  return {l.Compute(n.shape, dt, q)};
}

/// floor_divide: floor division (integers; floats as FloorDivFloating).
Outs FloorDivide(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  const Expr a = l.Operand(n, "self", n.shape, dt);
  const Expr b = l.Operand(n, "other", n.shape, dt);
  if (IsFloat(dt)) return {l.Compute(n.shape, dt, FloorDivFloating(a, b, dt))};
  return {l.Compute(n.shape, dt, Op(Prim::kFloorDiv, {a, b}))};
}

/// pow: x*x for exponent 2, sqrt for 0.5, else the pow primitive.
Outs Pow(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  const Expr a = l.Operand(n, "self", n.shape, dt);
  if (!CoreLowerer::IsTensor(n, "exponent")) {
    const double e = l.Number(n, "exponent", 1);
    if (e == 1) return {l.Compute(n.shape, dt, a)};
    if (e == 2) return {l.Compute(n.shape, dt, Op(Prim::kMul, {a, a}))};
    if (e == 3) return {l.Compute(n.shape, dt, Op(Prim::kMul, {Op(Prim::kMul, {a, a}), a}))};
    if (e == 0.5 && IsFloat(dt)) return {l.Compute(n.shape, dt, Op(Prim::kSqrt, {a}))};
    if (e == -1 && IsFloat(dt)) return {l.Compute(n.shape, dt, Op(Prim::kDiv, {Num(1, dt), a}))};
  }
  const Expr b = l.Operand(n, "exponent", n.shape, dt);
  return {l.Compute(n.shape, dt, Op(Prim::kPow, {a, b}))};
}

Outs Reciprocal(CoreLowerer& l, const OpNode& n) {
  const Expr x = l.Operand(n, "self", n.shape, n.dtype);
  return {l.Compute(n.shape, n.dtype, Op(Prim::kDiv, {Num(1, n.dtype), x}))};
}

Outs Relu(CoreLowerer& l, const OpNode& n) {
  const Expr x = l.Operand(n, "self", n.shape, n.dtype);
  const Expr zero = Num(0, n.dtype);
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {Op(Prim::kLt, {x, zero}), zero, x}))};
}

/// min(max(x, lo), hi) keeping NaN of x; bounds are numbers or tensors, either absent.
Expr Clamp(const Expr& x, const Expr& lo, const Expr& hi) {
  Expr y = x;
  if (lo) y = Op(Prim::kWhere, {Op(Prim::kLt, {y, lo}), lo, y});
  if (hi) y = Op(Prim::kWhere, {Op(Prim::kGt, {y, hi}), hi, y});
  return y;
}

Expr Bound(CoreLowerer& l, const OpNode& n, const std::string& name, DType dt) {
  const core::OpArg* a = n.Arg(name);
  if (a == nullptr || (!a->IsRef() && a->value.is_null())) return nullptr;
  return l.Operand(n, name, n.shape, dt);
}

Outs ClampRule(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  const Expr x = l.Operand(n, "self", n.shape, dt);
  const std::string lo = n.Arg("min") ? "min" : "min_val", hi = n.Arg("max") ? "max" : "max_val";
  return {l.Compute(n.shape, dt, Clamp(x, Bound(l, n, lo, dt), Bound(l, n, hi, dt)))};
}

Outs ClampMin(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  return {l.Compute(n.shape, dt, Clamp(l.Operand(n, "self", n.shape, dt), l.Operand(n, "min", n.shape, dt), nullptr))};
}

Outs ClampMax(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  return {l.Compute(n.shape, dt, Clamp(l.Operand(n, "self", n.shape, dt), nullptr, l.Operand(n, "max", n.shape, dt)))};
}

Outs LeakyRelu(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  const Expr x = l.Operand(n, "self", n.shape, dt);
  const Expr slope = Num(l.Number(n, "negative_slope", 0.01), dt);
  return {l.Compute(n.shape, dt, Op(Prim::kWhere, {Op(Prim::kGt, {x, Num(0, dt)}), x, Op(Prim::kMul, {x, slope})}))};
}

/// elu: scale * x for x > 0, else scale * alpha * expm1(input_scale * x).
Outs Elu(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  const Expr x = l.Operand(n, "self", n.shape, dt);
  const double alpha = l.Number(n, "alpha", 1), scale = l.Number(n, "scale", 1),
               input_scale = l.Number(n, "input_scale", 1);
  const Expr neg = Op(Prim::kMul, {Num(scale * alpha, dt), Op(Prim::kExpm1, {Op(Prim::kMul, {x, Num(input_scale, dt)})})});
  return {l.Compute(n.shape, dt, Op(Prim::kWhere, {Op(Prim::kGt, {x, Num(0, dt)}), Op(Prim::kMul, {x, Num(scale, dt)}), neg}))};
}

/// gelu: 0.5 x (1 + erf(x / sqrt 2)); approximate="tanh":
/// 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))) (Hendrycks & Gimpel 2016).
Outs Gelu(CoreLowerer& l, const OpNode& n) {
  const DType dt = n.dtype;
  const Expr x = l.Operand(n, "self", n.shape, dt);
  const auto approx = CoreLowerer::Value(n, "approximate");
  if (approx.is_string() && approx != "none" && approx != "tanh") {
    l.Unsupported(n, "approximate='" + approx.get<std::string>() + "' is not 'none' or 'tanh'");
    return {};
  }
  Expr inner;
  if (approx.is_string() && approx.get<std::string>() == "tanh") {
    const Expr cube = Op(Prim::kMul, {Op(Prim::kMul, {x, x}), x});
    const Expr arg = Op(Prim::kMul, {Num(std::sqrt(2.0 / std::numbers::pi), dt),
                                     Op(Prim::kAdd, {x, Op(Prim::kMul, {Num(0.044715, dt), cube})})});
    inner = Op(Prim::kTanh, {arg});
  } else {
    inner = Op(Prim::kErf, {Op(Prim::kMul, {x, Num(1.0 / std::numbers::sqrt2, dt)})});
  }
  return {l.Compute(n.shape, dt, Op(Prim::kMul, {Op(Prim::kMul, {Num(0.5, dt), x}), Op(Prim::kAdd, {Num(1, dt), inner})}))};
}

Outs Silu(CoreLowerer& l, const OpNode& n) {
  const Expr x = l.Operand(n, "self", n.shape, n.dtype);
  return {l.Compute(n.shape, n.dtype, Op(Prim::kMul, {x, Sigmoid(x)}))};
}

/// relu6(x + 3) / 6.
Expr HardSigmoidOf(const Expr& x, DType dt) {
  const Expr y = Clamp(Op(Prim::kAdd, {x, Num(3, dt)}), Num(0, dt), Num(6, dt));
  return Op(Prim::kDiv, {y, Num(6, dt)});
}

Outs Hardsigmoid(CoreLowerer& l, const OpNode& n) {
  const Expr x = l.Operand(n, "self", n.shape, n.dtype);
  return {l.Compute(n.shape, n.dtype, HardSigmoidOf(x, n.dtype))};
}

Outs Hardswish(CoreLowerer& l, const OpNode& n) {
  const Expr x = l.Operand(n, "self", n.shape, n.dtype);
  return {l.Compute(n.shape, n.dtype, Op(Prim::kMul, {x, HardSigmoidOf(x, n.dtype)}))};
}

/// softplus: x where beta x > threshold, else log1p(exp(beta x)) / beta.
Expr SoftplusOf(const Expr& x, double beta, double threshold, DType dt) {
  const Expr bx = beta == 1 ? x : Op(Prim::kMul, {x, Num(beta, dt)});
  Expr soft = Op(Prim::kLog1p, {Op(Prim::kExp, {bx})});
  if (beta != 1) soft = Op(Prim::kDiv, {soft, Num(beta, dt)});
  return Op(Prim::kWhere, {Op(Prim::kGt, {bx, Num(threshold, dt)}), x, soft});
}

Outs Softplus(CoreLowerer& l, const OpNode& n) {
  const Expr x = l.Operand(n, "self", n.shape, n.dtype);
  return {l.Compute(n.shape, n.dtype,
                    SoftplusOf(x, l.Number(n, "beta", 1), l.Number(n, "threshold", 20), n.dtype))};
}

Outs Mish(CoreLowerer& l, const OpNode& n) {
  const Expr x = l.Operand(n, "self", n.shape, n.dtype);
  return {l.Compute(n.shape, n.dtype, Op(Prim::kMul, {x, Op(Prim::kTanh, {SoftplusOf(x, 1, 20, n.dtype)})}))};
}

Outs Softsign(CoreLowerer& l, const OpNode& n) {
  const Expr x = l.Operand(n, "self", n.shape, n.dtype);
  return {l.Compute(n.shape, n.dtype, Op(Prim::kDiv, {x, Op(Prim::kAdd, {Num(1, n.dtype), Op(Prim::kAbs, {x})})}))};
}

Outs Exp2(CoreLowerer& l, const OpNode& n) {
  const Expr x = l.Operand(n, "self", n.shape, n.dtype);
  return {l.Compute(n.shape, n.dtype, Op(Prim::kPow, {Num(2, n.dtype), x}))};
}

/// where(condition, self, other).
Outs Where(CoreLowerer& l, const OpNode& n) {
  const Expr c = l.Operand(n, "condition", n.shape, DType::kBool);
  const Expr a = l.Operand(n, "self", n.shape, n.dtype);
  const Expr b = l.Operand(n, "other", n.shape, n.dtype);
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {c, a, b}))};
}

/// masked_fill(self, mask, value): value where mask.
Outs MaskedFill(CoreLowerer& l, const OpNode& n) {
  const Expr c = l.Operand(n, "mask", n.shape, DType::kBool);
  const Expr a = l.Operand(n, "self", n.shape, n.dtype);
  const Expr v = l.Operand(n, "value", n.shape, n.dtype);
  return {l.Compute(n.shape, n.dtype, Op(Prim::kWhere, {c, v, a}))};
}

/// Copies and casts: _to_copy, clone, alias, detach, lift_fresh_copy, contiguous.
Outs Identity(CoreLowerer& l, const OpNode& n) {
  return {l.Compute(n.shape, n.dtype, l.Operand(n, "self", n.shape, n.dtype))};
}

/// copy(self, src): src broadcast to self's shape, in self's dtype.
Outs Copy(CoreLowerer& l, const OpNode& n) {
  return {l.Compute(n.shape, n.dtype, l.Operand(n, "src", n.shape, n.dtype))};
}

/// Creation with a constant: full, zeros, ones, empty (zeros), *_like, fill,
/// scalar_tensor, new_*.
template <int kWhich>  // 0: zeros/empty, 1: ones, 2: the node's fill_value/value/s
Outs Fill(CoreLowerer& l, const OpNode& n) {
  double v = kWhich == 1 ? 1 : 0;
  if (kWhich == 2) {
    for (const char* name : {"fill_value", "value", "s"}) {
      if (n.Arg(name) != nullptr) {
        if (CoreLowerer::IsTensor(n, name)) {
          return {l.Compute(n.shape, n.dtype, l.Operand(n, name, n.shape, n.dtype))};
        }
        v = l.Number(n, name);
      }
    }
  }
  return {l.Compute(n.shape, n.dtype, Constant(v, n.dtype))};
}

/// arange(start, end, step): start + i * step, computed in double then cast; for an
/// integer dtype with integer start and step, in int64 (exact, and index arithmetic: a
/// mask built from aranges, as tril / triu capture to, stays affine in the loop indices).
Outs Arange(CoreLowerer& l, const OpNode& n) {
  const double start = l.Number(n, "start", 0), step = l.Number(n, "step", 1);
  constexpr double kExactInDouble = 9007199254740992.0;  // 2^53: integers a double holds exactly
  const bool integral = !core::IsFloatingPoint(n.dtype) && n.dtype != DType::kBool && std::floor(start) == start &&
                        std::floor(step) == step && std::fabs(start) < kExactInDouble && std::fabs(step) < kExactInDouble;
  if (integral) {
    const Expr v = IAdd(IMul(Var(0), static_cast<int64_t>(step)), static_cast<int64_t>(start));
    return {l.Compute(n.shape, n.dtype, Cast(v, n.dtype))};
  }
  const Expr i = Cast(Var(0), DType::kFloat64);
  const Expr v = Op(Prim::kAdd, {Float(start, DType::kFloat64), Op(Prim::kMul, {i, Float(step, DType::kFloat64)})});
  return {l.Compute(n.shape, n.dtype, Cast(v, n.dtype))};
}

const std::vector<LoweringRule> kRules = {
    {"aten.abs.default", Unary<Prim::kAbs>, "element: abs"},
    {"aten.neg.default", Unary<Prim::kNeg>, "element: neg"},
    {"aten.exp.default", Unary<Prim::kExp>, "element: exp"},
    {"aten.exp2.default", Exp2, "element: pow(2, x)"},
    {"aten.expm1.default", Unary<Prim::kExpm1>, "element: expm1"},
    {"aten.log.default", Unary<Prim::kLog>, "element: log"},
    {"aten.log2.default", Unary<Prim::kLog2>, "element: log2"},
    {"aten.log10.default", Unary<Prim::kLog10>, "element: log10"},
    {"aten.log1p.default", Unary<Prim::kLog1p>, "element: log1p"},
    {"aten.sqrt.default", Unary<Prim::kSqrt>, "element: sqrt"},
    {"aten.rsqrt.default", Unary<Prim::kRsqrt>, "element: rsqrt"},
    {"aten.sin.default", Unary<Prim::kSin>, "element: sin"},
    {"aten.cos.default", Unary<Prim::kCos>, "element: cos"},
    {"aten.tan.default", Unary<Prim::kTan>, "element: tan"},
    {"aten.asin.default", Unary<Prim::kAsin>, "element: asin"},
    {"aten.acos.default", Unary<Prim::kAcos>, "element: acos"},
    {"aten.atan.default", Unary<Prim::kAtan>, "element: atan"},
    {"aten.sinh.default", Unary<Prim::kSinh>, "element: sinh"},
    {"aten.cosh.default", Unary<Prim::kCosh>, "element: cosh"},
    {"aten.tanh.default", Unary<Prim::kTanh>, "element: tanh"},
    {"aten.asinh.default", Unary<Prim::kAsinh>, "element: asinh"},
    {"aten.acosh.default", Unary<Prim::kAcosh>, "element: acosh"},
    {"aten.atanh.default", Unary<Prim::kAtanh>, "element: atanh"},
    {"aten.erf.default", Unary<Prim::kErf>, "element: erf"},
    {"aten.erfc.default", Unary<Prim::kErfc>, "element: erfc"},
    {"aten.sigmoid.default", Unary<Prim::kSigmoid>, "element: sigmoid"},
    {"aten.floor.default", Unary<Prim::kFloor>, "element: floor (identity on integers)"},
    {"aten.ceil.default", Unary<Prim::kCeil>, "element: ceil (identity on integers)"},
    {"aten.round.default", Unary<Prim::kRound>, "element: round half to even"},
    {"aten.trunc.default", Unary<Prim::kTrunc>, "element: trunc"},
    {"aten.sign.default", Unary<Prim::kSign>, "element: sign"},
    {"aten.reciprocal.default", Reciprocal, "element: div(1, x)"},
    {"aten.relu.default", Relu, "element: where(x < 0, 0, x)"},
    {"aten.isnan.default", Test<Prim::kIsNan>, "element: isnan (false on integers)"},
    {"aten.isinf.default", Test<Prim::kIsInf>, "element: isinf (false on integers)"},
    {"aten.add.Tensor", AddSub<Prim::kAdd>, "element: add (alpha as a mul)"},
    {"aten.add.Scalar", AddSub<Prim::kAdd>, "element: add (alpha as a mul)"},
    {"aten.sub.Tensor", AddSub<Prim::kSub>, "element: sub (alpha as a mul)"},
    {"aten.sub.Scalar", AddSub<Prim::kSub>, "element: sub (alpha as a mul)"},
    {"aten.rsub.Tensor", Rsub, "element: sub(other, alpha * self)"},
    {"aten.rsub.Scalar", Rsub, "element: sub(other, alpha * self)"},
    {"aten.mul.Tensor", Binary<Prim::kMul>, "element: mul"},
    {"aten.mul.Scalar", Binary<Prim::kMul>, "element: mul"},
    {"aten.div.Tensor", Div, "element: div"},
    {"aten.div.Scalar", Div, "element: div"},
    {"aten.div.Tensor_mode", Div, "element: div then trunc / floor (floor_div on integers)"},
    {"aten.div.Scalar_mode", Div, "element: div then trunc / floor (floor_div on integers)"},
    {"aten.floor_divide.default", FloorDivide, "element: floor_div"},
    {"aten.remainder.Tensor", Binary<Prim::kRemainder>, "element: remainder"},
    {"aten.remainder.Scalar", Binary<Prim::kRemainder>, "element: remainder"},
    {"aten.fmod.Tensor", Binary<Prim::kFmod>, "element: fmod"},
    {"aten.fmod.Scalar", Binary<Prim::kFmod>, "element: fmod"},
    {"aten.pow.Tensor_Tensor", Pow, "element: pow"},
    {"aten.pow.Tensor_Scalar", Pow, "element: mul / sqrt / div for exponents 2, 3, 0.5, -1, else pow"},
    {"aten.pow.Scalar", Pow, "element: pow"},
    {"aten.maximum.default", Binary<Prim::kMaximum>, "element: maximum"},
    {"aten.minimum.default", Binary<Prim::kMinimum>, "element: minimum"},
    {"aten.atan2.default", Binary<Prim::kAtan2>, "element: atan2"},
    {"aten.eq.Tensor", Binary<Prim::kEq>, "element: eq"},
    {"aten.eq.Scalar", Binary<Prim::kEq>, "element: eq"},
    {"aten.ne.Tensor", Binary<Prim::kNe>, "element: ne"},
    {"aten.ne.Scalar", Binary<Prim::kNe>, "element: ne"},
    {"aten.lt.Tensor", Binary<Prim::kLt>, "element: lt"},
    {"aten.lt.Scalar", Binary<Prim::kLt>, "element: lt"},
    {"aten.le.Tensor", Binary<Prim::kLe>, "element: le"},
    {"aten.le.Scalar", Binary<Prim::kLe>, "element: le"},
    {"aten.gt.Tensor", Binary<Prim::kGt>, "element: gt"},
    {"aten.gt.Scalar", Binary<Prim::kGt>, "element: gt"},
    {"aten.ge.Tensor", Binary<Prim::kGe>, "element: ge"},
    {"aten.ge.Scalar", Binary<Prim::kGe>, "element: ge"},
    {"aten.logical_and.default", Logical<Prim::kLogicalAnd>, "element: logical_and"},
    {"aten.logical_or.default", Logical<Prim::kLogicalOr>, "element: logical_or"},
    {"aten.logical_xor.default", Logical<Prim::kLogicalXor>, "element: logical_xor"},
    {"aten.logical_not.default", Logical<Prim::kLogicalNot>, "element: logical_not"},
    {"aten.bitwise_and.Tensor", Bitwise<Prim::kBitAnd, Prim::kLogicalAnd>, "element: bit_and"},
    {"aten.bitwise_and.Scalar", Bitwise<Prim::kBitAnd, Prim::kLogicalAnd>, "element: bit_and"},
    {"aten.bitwise_or.Tensor", Bitwise<Prim::kBitOr, Prim::kLogicalOr>, "element: bit_or"},
    {"aten.bitwise_or.Scalar", Bitwise<Prim::kBitOr, Prim::kLogicalOr>, "element: bit_or"},
    {"aten.bitwise_xor.Tensor", Bitwise<Prim::kBitXor, Prim::kLogicalXor>, "element: bit_xor"},
    {"aten.bitwise_xor.Scalar", Bitwise<Prim::kBitXor, Prim::kLogicalXor>, "element: bit_xor"},
    {"aten.bitwise_not.default", Bitwise<Prim::kBitNot, Prim::kLogicalNot>, "element: bit_not"},
    {"aten.bitwise_left_shift.Tensor", Bitwise<Prim::kShiftLeft, Prim::kShiftLeft>, "element: shift_left"},
    {"aten.bitwise_left_shift.Tensor_Scalar", Bitwise<Prim::kShiftLeft, Prim::kShiftLeft>, "element: shift_left"},
    {"aten.__lshift__.Scalar", Bitwise<Prim::kShiftLeft, Prim::kShiftLeft>, "element: shift_left"},
    {"aten.__lshift__.Tensor", Bitwise<Prim::kShiftLeft, Prim::kShiftLeft>, "element: shift_left"},
    {"aten.bitwise_right_shift.Tensor", Bitwise<Prim::kShiftRight, Prim::kShiftRight>, "element: shift_right"},
    {"aten.bitwise_right_shift.Tensor_Scalar", Bitwise<Prim::kShiftRight, Prim::kShiftRight>, "element: shift_right"},
    {"aten.__rshift__.Scalar", Bitwise<Prim::kShiftRight, Prim::kShiftRight>, "element: shift_right"},
    {"aten.__rshift__.Tensor", Bitwise<Prim::kShiftRight, Prim::kShiftRight>, "element: shift_right"},
    {"aten.where.self", Where, "element: where"},
    {"aten.masked_fill.Scalar", MaskedFill, "element: where(mask, value, self)"},
    {"aten.masked_fill.Tensor", MaskedFill, "element: where(mask, value, self)"},
    {"aten.clamp.default", ClampRule, "element: two wheres (NaN kept)"},
    {"aten.clamp.Tensor", ClampRule, "element: two wheres (NaN kept)"},
    {"aten.clamp_min.default", ClampMin, "element: where"},
    {"aten.clamp_max.default", ClampMax, "element: where"},
    {"aten.hardtanh.default", ClampRule, "element: two wheres"},
    {"aten.leaky_relu.default", LeakyRelu, "element: where(x > 0, x, slope x)"},
    {"aten.elu.default", Elu, "element: where, expm1"},
    {"aten.gelu.default", Gelu, "element: erf or tanh form"},
    {"aten.silu.default", Silu, "element: x sigmoid(x)"},
    {"aten.hardsigmoid.default", Hardsigmoid, "element: clamp(x + 3, 0, 6) / 6"},
    {"aten.hardswish.default", Hardswish, "element: x clamp(x + 3, 0, 6) / 6"},
    {"aten.softplus.default", Softplus, "element: where(beta x > threshold, x, log1p(exp(beta x)) / beta)"},
    {"aten.mish.default", Mish, "element: x tanh(softplus(x))"},
    {"aten.softsign.default", Softsign, "element: x / (1 + |x|)"},
    {"aten._to_copy.default", Identity, "element: cast"},
    {"aten.clone.default", Identity, "element: copy"},
    {"aten.alias.default", Identity, "element: copy"},
    {"aten.detach.default", Identity, "element: copy"},
    {"aten.lift_fresh_copy.default", Identity, "element: copy"},
    {"aten.contiguous.default", Identity, "element: copy"},
    {"aten.copy.default", Copy, "element: src broadcast and cast"},
    {"aten.fill.Scalar", Fill<2>, "element: constant"},
    {"aten.fill.Tensor", Fill<2>, "element: the value broadcast"},
    {"aten.full.default", Fill<2>, "element: constant"},
    {"aten.full_like.default", Fill<2>, "element: constant"},
    {"aten.new_full.default", Fill<2>, "element: constant"},
    {"aten.scalar_tensor.default", Fill<2>, "element: constant"},
    {"aten.zeros.default", Fill<0>, "element: constant 0"},
    {"aten.zeros_like.default", Fill<0>, "element: constant 0"},
    {"aten.new_zeros.default", Fill<0>, "element: constant 0"},
    {"aten.empty.memory_format", Fill<0>, "element: constant 0 (any content is valid)"},
    {"aten.empty_like.default", Fill<0>, "element: constant 0 (any content is valid)"},
    {"aten.empty_strided.default", Fill<0>, "element: constant 0 (any content is valid)"},
    {"aten.new_empty.default", Fill<0>, "element: constant 0 (any content is valid)"},
    {"aten.ones.default", Fill<1>, "element: constant 1"},
    {"aten.ones_like.default", Fill<1>, "element: constant 1"},
    {"aten.new_ones.default", Fill<1>, "element: constant 1"},
    {"aten.arange.default", Arange, "element: start + i step"},
    {"aten.arange.start", Arange, "element: start + i step"},
    {"aten.arange.start_step", Arange, "element: start + i step"},
};

}  // namespace

const std::vector<LoweringRule>& ElementwiseRules() { return kRules; }

int Map(CoreLowerer& l, const std::vector<int64_t>& shape, DType dtype,
        const std::function<Expr(const std::vector<Expr>&)>& fn) {
  return l.Compute(shape, dtype, fn(IndexVars(shape.size())));
}

}  // namespace kernelevolve::operators::ir
