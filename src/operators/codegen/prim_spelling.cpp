#include "operators/codegen/prim_spelling.h"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <map>

#include "core/error.h"

namespace kernelevolve::operators::codegen {
namespace {

using core::DType;
using ir::Prim;

/// Which operands a row is for (kFloat64 rows override kFloat ones for float64).
enum class On { kAny, kFloat, kFloat64, kInt };

/// One row: {0} {1} {2} are the operands, {T} the result type. An empty cell means
/// "as the C++ scalar column" (kCppVector) or "no spelling".
struct Row {
  Prim prim;
  On on;
  const char* cpp;
  const char* cpp_vector;  // float32 only; empty: as cpp
  const char* triton;
};

// clang-format off
const std::vector<Row> kTable = {
    // Integers wrap modulo 2^bits as in PyTorch (two's complement): through uint64_t in
    // C++, where signed overflow is undefined (int64 hashing multiplies past 2^63).
    {Prim::kAdd, On::kInt, "static_cast<{T}>(static_cast<uint64_t>({0}) + static_cast<uint64_t>({1}))", "",
     "({0} + {1})"},
    {Prim::kSub, On::kInt, "static_cast<{T}>(static_cast<uint64_t>({0}) - static_cast<uint64_t>({1}))", "",
     "({0} - {1})"},
    {Prim::kMul, On::kInt, "static_cast<{T}>(static_cast<uint64_t>({0}) * static_cast<uint64_t>({1}))", "",
     "({0} * {1})"},
    {Prim::kAdd, On::kAny, "({0} + {1})", "", "({0} + {1})"},
    {Prim::kSub, On::kAny, "({0} - {1})", "", "({0} - {1})"},
    {Prim::kMul, On::kAny, "({0} * {1})", "", "({0} * {1})"},
    {Prim::kDiv, On::kFloat, "({0} / {1})", "", "({0} / {1})"},
    {Prim::kDiv, On::kInt, "({0} / {1})", "", "({0} // {1})"},  // Triton's // truncates like C
    {Prim::kFloorDiv, On::kFloat, "std::floor({0} / {1})", "", "tl.floor({0} / {1})"},
    {Prim::kFloorDiv, On::kInt, "ke_floor_div({0}, {1})", "",
     "(({0} // {1}) - ((({0} % {1}) != 0) & ((({0} % {1}) < 0) != ({1} < 0))).to({0}.dtype))"},
    {Prim::kRemainder, On::kFloat, "ke_rem({0}, {1})", "",
     "tl.where(((({0} % {1}) != 0) & ((({0} % {1}) < 0) != ({1} < 0))), ({0} % {1}) + {1}, {0} % {1})"},
    {Prim::kRemainder, On::kInt, "ke_rem({0}, {1})", "",
     "tl.where(((({0} % {1}) != 0) & ((({0} % {1}) < 0) != ({1} < 0))), ({0} % {1}) + {1}, {0} % {1})"},
    {Prim::kFmod, On::kFloat, "std::fmod({0}, {1})", "", "({0} % {1})"},
    {Prim::kFmod, On::kInt, "({0} % {1})", "", "({0} % {1})"},
    {Prim::kNeg, On::kAny, "(-{0})", "", "(-{0})"},
    {Prim::kAbs, On::kFloat, "std::fabs({0})", "", "tl.abs({0})"},
    {Prim::kAbs, On::kInt, "({0} < 0 ? -{0} : {0})", "", "tl.abs({0})"},
    {Prim::kMaximum, On::kFloat, "(({0} > {1} || {0} != {0}) ? {0} : {1})", "",
     "tl.where(({0} > {1}) | ({0} != {0}), {0}, {1})"},
    {Prim::kMaximum, On::kInt, "({0} > {1} ? {0} : {1})", "", "tl.maximum({0}, {1})"},
    {Prim::kMinimum, On::kFloat, "(({0} < {1} || {0} != {0}) ? {0} : {1})", "",
     "tl.where(({0} < {1}) | ({0} != {0}), {0}, {1})"},
    {Prim::kMinimum, On::kInt, "({0} < {1} ? {0} : {1})", "", "tl.minimum({0}, {1})"},
    // Triton: exp2(b log2 |a|) (tl only, so that TRITON_INTERPRET runs it), the sign
    // of a negative base to an odd integer power, 1 for a zero exponent.
    {Prim::kPow, On::kFloat, "std::pow({0}, {1})", "",
     "tl.where({1} == 0, 1.0, tl.where(({0} < 0) & ({1} == tl.floor({1})), "
     "tl.where(tl.abs({1}) % 2 == 1, -1.0, 1.0) * tl.exp2({1} * tl.log2(tl.abs({0}))), "
     "tl.exp2({1} * tl.log2({0}))))"},
    {Prim::kPow, On::kInt, "ke_ipow({0}, {1})", "", ""},
    {Prim::kSign, On::kFloat, "({0} != {0} ? {0} : static_cast<{T}>(({0} > 0) - ({0} < 0)))", "",
     "tl.where({0} != {0}, {0}, ({0} > 0).to({0}.dtype) - ({0} < 0).to({0}.dtype))"},
    {Prim::kSign, On::kInt, "static_cast<{T}>(({0} > 0) - ({0} < 0))", "",
     "(({0} > 0).to({0}.dtype) - ({0} < 0).to({0}.dtype))"},
    {Prim::kExp, On::kFloat, "std::exp({0})", "ke_exp({0})", "tl.exp({0})"},
    {Prim::kExpm1, On::kFloat, "std::expm1({0})", "ke_expm1({0})",
     "tl.where(tl.abs({0}) < 1e-3, {0} * (1.0 + {0} * (0.5 + {0} / 6.0)), tl.exp({0}) - 1.0)"},
    {Prim::kLog, On::kFloat, "std::log({0})", "ke_log({0})", "tl.log({0})"},
    {Prim::kLog2, On::kFloat, "std::log2({0})", "", "tl.log2({0})"},
    {Prim::kLog10, On::kFloat, "std::log10({0})", "", "tl.log({0}) * 0.43429448190325176"},
    {Prim::kLog1p, On::kFloat, "std::log1p({0})", "ke_log1p({0})",
     "tl.where(tl.abs({0}) < 1e-4, {0} * (1.0 - {0} * (0.5 - {0} / 3.0)), tl.log(1.0 + {0}))"},
    {Prim::kSqrt, On::kFloat, "std::sqrt({0})", "", "tl.sqrt({0})"},
    {Prim::kRsqrt, On::kFloat, "(static_cast<{T}>(1) / std::sqrt({0}))", "", "tl.math.rsqrt({0})"},
    {Prim::kSin, On::kFloat, "std::sin({0})", "", "tl.sin({0})"},
    {Prim::kCos, On::kFloat, "std::cos({0})", "", "tl.cos({0})"},
    {Prim::kTan, On::kFloat, "std::tan({0})", "", "(tl.sin({0}) / tl.cos({0}))"},
    {Prim::kAsin, On::kFloat, "std::asin({0})", "", "libdevice.asin({0})"},
    {Prim::kAcos, On::kFloat, "std::acos({0})", "", "libdevice.acos({0})"},
    {Prim::kAtan, On::kFloat, "std::atan({0})", "", "libdevice.atan({0})"},
    {Prim::kSinh, On::kFloat, "std::sinh({0})", "", "((tl.exp({0}) - tl.exp(-{0})) * 0.5)"},
    {Prim::kCosh, On::kFloat, "std::cosh({0})", "", "((tl.exp({0}) + tl.exp(-{0})) * 0.5)"},
    {Prim::kTanh, On::kFloat, "std::tanh({0})", "ke_tanh({0})", "(2.0 * tl.sigmoid(2.0 * {0}) - 1.0)"},
    {Prim::kAsinh, On::kFloat, "std::asinh({0})", "",
     "tl.where({0} < 0, -1.0, 1.0) * tl.log(tl.abs({0}) + tl.sqrt({0} * {0} + 1.0))"},
    {Prim::kAcosh, On::kFloat, "std::acosh({0})", "", "tl.log({0} + tl.sqrt({0} * {0} - 1.0))"},
    {Prim::kAtanh, On::kFloat, "std::atanh({0})", "", "(0.5 * tl.log((1.0 + {0}) / (1.0 - {0})))"},
    {Prim::kAtan2, On::kFloat, "std::atan2({0}, {1})", "", "libdevice.atan2({0}, {1})"},
    {Prim::kErf, On::kFloat, "std::erf({0})", "ke_erf({0})", "tl.math.erf({0})"},
    {Prim::kErfc, On::kFloat, "std::erfc({0})", "", "(1.0 - tl.math.erf({0}))"},
    {Prim::kSigmoid, On::kFloat, "(static_cast<{T}>(1) / (static_cast<{T}>(1) + std::exp(-{0})))",
     "ke_sigmoid({0})", "tl.sigmoid({0})"},
    {Prim::kFloor, On::kFloat, "std::floor({0})", "", "tl.floor({0})"},
    {Prim::kCeil, On::kFloat, "std::ceil({0})", "", "tl.ceil({0})"},
    {Prim::kRound, On::kFloat, "std::nearbyint({0})", "",
     // Round half to even through the float addition's own rounding (adding and
     // removing 2^23 leaves the nearest integer, ties to even; one rounding only, so
     // a multiply contracted into the add still rounds once).
     "tl.where(tl.abs({0}) >= 8388608.0, {0}, tl.where({0} >= 0, ({0} + 8388608.0) - 8388608.0, "
     "({0} - 8388608.0) + 8388608.0))"},
    {Prim::kRound, On::kFloat64, "std::nearbyint({0})", "",
     "tl.where(tl.abs({0}) >= 4503599627370496.0, {0}, tl.where({0} >= 0, ({0} + 4503599627370496.0) - "
     "4503599627370496.0, ({0} - 4503599627370496.0) + 4503599627370496.0))"},
    {Prim::kTrunc, On::kFloat, "std::trunc({0})", "", "tl.where({0} < 0, tl.ceil({0}), tl.floor({0}))"},
    {Prim::kEq, On::kAny, "({0} == {1})", "", "({0} == {1})"},
    {Prim::kNe, On::kAny, "({0} != {1})", "", "({0} != {1})"},
    {Prim::kLt, On::kAny, "({0} < {1})", "", "({0} < {1})"},
    {Prim::kLe, On::kAny, "({0} <= {1})", "", "({0} <= {1})"},
    {Prim::kGt, On::kAny, "({0} > {1})", "", "({0} > {1})"},
    {Prim::kGe, On::kAny, "({0} >= {1})", "", "({0} >= {1})"},
    {Prim::kIsNan, On::kFloat, "({0} != {0})", "", "({0} != {0})"},
    {Prim::kIsInf, On::kFloat, "(std::fabs({0}) == INFINITY)", "", "(tl.abs({0}) == float('inf'))"},
    {Prim::kLogicalAnd, On::kAny, "({0} && {1})", "", "({0} & {1})"},
    {Prim::kLogicalOr, On::kAny, "({0} || {1})", "", "({0} | {1})"},
    {Prim::kLogicalXor, On::kAny, "({0} != {1})", "", "({0} ^ {1})"},
    {Prim::kLogicalNot, On::kAny, "(!{0})", "", "({0} == 0)"},
    {Prim::kBitAnd, On::kInt, "({0} & {1})", "", "({0} & {1})"},
    {Prim::kBitOr, On::kInt, "({0} | {1})", "", "({0} | {1})"},
    {Prim::kBitXor, On::kInt, "({0} ^ {1})", "", "({0} ^ {1})"},
    {Prim::kBitNot, On::kInt, "static_cast<{T}>(~{0})", "", "(~{0})"},
    // Shift counts outside [0, bits) are undefined in C++ and poison in LLVM; PyTorch
    // gives 0 for a left shift and the sign fill (-1 or 0) for a right shift there
    // (measured with torch 2.11 on int64 and int32, counts 64, 65, 70 and -1).
    {Prim::kShiftLeft, On::kInt,
     "static_cast<{T}>(static_cast<uint64_t>({1}) < sizeof({T}) * 8 ? static_cast<uint64_t>({0}) << {1} : 0)", "",
     "tl.where(({1} >= 0) & ({1} < {T}.primitive_bitwidth), {0} << tl.minimum(tl.maximum({1}, 0), "
     "{T}.primitive_bitwidth - 1), 0)"},
    {Prim::kShiftRight, On::kInt,
     "static_cast<{T}>(static_cast<uint64_t>({1}) < sizeof({T}) * 8 ? {0} >> {1} : ({0} < 0 ? -1 : 0))", "",
     "tl.where(({1} >= 0) & ({1} < {T}.primitive_bitwidth), {0} >> tl.minimum(tl.maximum({1}, 0), "
     "{T}.primitive_bitwidth - 1), tl.where({0} < 0, -1, 0))"},
    {Prim::kWhere, On::kAny, "({0} ? {1} : {2})", "", "tl.where({0}, {1}, {2})"},
    {Prim::kCast, On::kAny, "static_cast<{T}>({0})", "", "{0}.to({T})"},
};
// clang-format on

const Row* Find(Prim op, DType operand) {
  const On want = core::IsFloatingPoint(operand) ? On::kFloat : On::kInt;
  const Row* any = nullptr;
  const Row* exact = nullptr;
  for (const Row& r : kTable) {
    if (r.prim != op) continue;
    if (operand == DType::kFloat64 && r.on == On::kFloat64) return &r;
    if (r.on == want && exact == nullptr) exact = &r;
    if (r.on == On::kAny) any = &r;
  }
  return exact != nullptr ? exact : any;
}

std::string Fill(const std::string& pattern, const std::vector<std::string>& args, const std::string& type) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '{' && i + 2 < pattern.size() && pattern[i + 2] == '}') {
      const char c = pattern[i + 1];
      if (c >= '0' && c <= '2') {
        out += args.at(static_cast<size_t>(c - '0'));
        i += 2;
        continue;
      }
      if (c == 'T') {
        out += type;
        i += 2;
        continue;
      }
    }
    out += pattern[i];
  }
  return out;
}

/// C++ helper functions by name (integer floor division and remainders, float
/// remainder with the divisor's sign, integer power by squaring).
const std::map<std::string, std::string>& CppHelpers() {
  static const std::map<std::string, std::string> helpers = {
      {"ke_floor_div",
       "template <typename T> static inline T ke_floor_div(T a, T b) {\n"
       "  T q = a / b;\n  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n"},
      {"ke_rem",
       "// Remainder with the divisor's sign (torch.remainder, Python's %).\n"
       "static inline float ke_rem(float a, float b) {\n"
       "  float m = std::fmod(a, b);\n  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;\n}\n"
       "static inline double ke_rem(double a, double b) {\n"
       "  double m = std::fmod(a, b);\n  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;\n}\n"
       "template <typename T> static inline T ke_rem(T a, T b) {\n"
       "  T m = a % b;\n  return (m != 0 && ((m < 0) != (b < 0))) ? m + b : m;\n}\n"},
      {"ke_ipow",
       "// Integer power by squaring (negative exponents give 0 except for bases 1 and -1).\n"
       "template <typename T> static inline T ke_ipow(T base, T exp) {\n"
       "  if (exp < 0) return base == 1 ? 1 : (base == -1 ? ((exp & 1) ? -1 : 1) : 0);\n"
       "  T result = 1;\n"
       "  while (exp > 0) {\n    if (exp & 1) result *= base;\n    base *= base;\n    exp >>= 1;\n  }\n"
       "  return result;\n}\n"},
      // bfloat16 is held as its bits (uint16_t): GCC 12 has no __bf16 arithmetic or
      // conversions. A bfloat16 is the upper half of a float32; float -> bfloat16 rounds
      // to nearest, ties to even, and keeps NaN a (quiet) NaN, as torch's c10::BFloat16
      // (c10/util/BFloat16.h, round_to_nearest_even).
      {"ke_bf16_to_float",
       "static inline float ke_bf16_to_float(uint16_t b) {\n"
       "  const uint32_t u = static_cast<uint32_t>(b) << 16;\n  float f;\n  std::memcpy(&f, &u, 4);\n  return f;\n}\n"},
      {"ke_float_to_bf16",
       "static inline uint16_t ke_float_to_bf16(float f) {\n"
       "  uint32_t u;\n  std::memcpy(&u, &f, 4);\n"
       "  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);\n"
       "  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);\n}\n"},
  };
  return helpers;
}

}  // namespace

std::string SpellReduceIdentity(Language lang, ir::ReduceOp op, DType value) {
  const bool cpp = lang != Language::kTriton;
  const bool fp = core::IsFloatingPoint(value);
  // Triton: integers narrower than int64 are compared as int32.
  const bool wide = value == DType::kInt64;
  switch (op) {
    case ir::ReduceOp::kSum: return "0";
    case ir::ReduceOp::kProd: return "1";
    case ir::ReduceOp::kMax:
    case ir::ReduceOp::kArgMax:
    case ir::ReduceOp::kArgMaxLastNaN:
      if (fp) return cpp ? "-INFINITY" : "float('-inf')";
      if (cpp) return fmt::format("std::numeric_limits<{}>::lowest()", SpellType(lang, value));
      return wide ? "-9223372036854775808" : "-2147483648";
    case ir::ReduceOp::kMin:
    case ir::ReduceOp::kArgMin:
      if (fp) return cpp ? "INFINITY" : "float('inf')";
      if (cpp) return fmt::format("std::numeric_limits<{}>::max()", SpellType(lang, value));
      return wide ? "9223372036854775807" : "2147483647";
    case ir::ReduceOp::kAny: return cpp ? "false" : "0";
    case ir::ReduceOp::kAll: return cpp ? "true" : "1";
  }
  return "0";
}

std::string SpellType(Language lang, DType dtype) {
  const bool cpp = lang != Language::kTriton;
  switch (dtype) {
    case DType::kFloat32: return cpp ? "float" : "tl.float32";
    case DType::kFloat64: return cpp ? "double" : "tl.float64";
    case DType::kInt8: return cpp ? "int8_t" : "tl.int8";
    case DType::kInt16: return cpp ? "int16_t" : "tl.int16";
    case DType::kInt32: return cpp ? "int32_t" : "tl.int32";
    case DType::kInt64: return cpp ? "int64_t" : "tl.int64";
    case DType::kUInt8: return cpp ? "uint8_t" : "tl.uint8";
    case DType::kBool: return cpp ? "bool" : "tl.int1";
    case DType::kFloat16: return cpp ? "_Float16" : "tl.float16";
    case DType::kBFloat16: return cpp ? "uint16_t" : "tl.bfloat16";  // its bits: ke_bf16_to_float
  }
  return "?";
}

std::string SpellPrim(Language lang, Prim op, DType operand, DType result, const std::vector<std::string>& args) {
  const Row* row = Find(op, operand);
  const char* cell = nullptr;
  if (row != nullptr) {
    switch (lang) {
      case Language::kCppScalar: cell = row->cpp; break;
      case Language::kCppVector:
        cell = (operand == DType::kFloat32 && row->cpp_vector[0] != '\0') ? row->cpp_vector : row->cpp;
        break;
      case Language::kTriton: cell = row->triton; break;
    }
  }
  if (cell == nullptr || cell[0] == '\0') {
    throw core::InternalError(fmt::format("codegen: no {} spelling of '{}' on {}",
                                          lang == Language::kTriton ? "Triton" : "C++",
                                          ir::Info(op).name, core::DTypeName(operand)));
  }
  // C++ converts bfloat16 through float32 (CppHelpers: ke_bf16_to_float / ke_float_to_bf16).
  if (op == Prim::kCast && lang != Language::kTriton && (operand == DType::kBFloat16 || result == DType::kBFloat16)) {
    if (operand == result) return args.at(0);
    const std::string wide = operand == DType::kBFloat16 ? "ke_bf16_to_float(" + args.at(0) + ")"
                                                          : "static_cast<float>(" + args.at(0) + ")";
    if (result == DType::kBFloat16) return "ke_float_to_bf16(" + wide + ")";
    if (result == DType::kBool) return "(" + wide + " != 0)";
    return result == DType::kFloat32 ? wide : fmt::format("static_cast<{}>({})", SpellType(lang, result), wide);
  }
  if (op == Prim::kCast && result == DType::kBool) {
    return lang == Language::kTriton ? "(" + args.at(0) + " != 0)" : "(" + args.at(0) + " != 0)";
  }
  return Fill(cell, args, SpellType(lang, result));
}

Prim SpellingPrim(const ir::ExprNode& e) {
  if ((e.op == Prim::kFloorDiv || e.op == Prim::kRemainder) && !core::IsFloatingPoint(e.dtype)) {
    int64_t divisor = 0;
    if (ir::KnownNonNegative(e.args[0]) && ir::IsIntConst(e.args[1], &divisor) && divisor > 0) {
      return e.op == Prim::kFloorDiv ? Prim::kDiv : Prim::kFmod;
    }
  }
  return e.op;
}

std::string SpellConstant(Language lang, const ir::ExprNode& c) {
  const bool triton = lang == Language::kTriton;
  if (!triton && c.dtype == DType::kBFloat16) {  // bits in C++: the float32 value, rounded
    ir::ExprNode wide = c;
    wide.dtype = DType::kFloat32;
    return "ke_float_to_bf16(" + SpellConstant(lang, wide) + ")";
  }
  if (core::IsFloatingPoint(c.dtype)) {
    const double v = c.fvalue;
    if (std::isnan(v)) return triton ? "float('nan')" : (c.dtype == DType::kFloat32 ? "NAN" : "static_cast<double>(NAN)");
    if (std::isinf(v)) {
      if (triton) return v > 0 ? "float('inf')" : "float('-inf')";
      const std::string inf = c.dtype == DType::kFloat32 ? "INFINITY" : "static_cast<double>(INFINITY)";
      return v > 0 ? inf : "(-" + inf + ")";
    }
    std::string text = fmt::format("{:.17g}", v);
    if (text.find_first_of(".e") == std::string::npos) text += ".0";
    if (triton) return text;
    return c.dtype == DType::kFloat32 ? text + "f" : text;
  }
  if (c.dtype == DType::kBool) return triton ? (c.ivalue != 0 ? "True" : "False") : (c.ivalue != 0 ? "true" : "false");
  if (triton) return fmt::format("{}", c.ivalue);
  if (c.dtype == DType::kInt64) {
    return c.ivalue == INT64_MIN ? "INT64_MIN" : fmt::format("INT64_C({})", c.ivalue);
  }
  return fmt::format("static_cast<{}>({})", SpellType(lang, c.dtype), c.ivalue);
}

std::string CppHelpersFor(const std::string& code) {
  std::string out;
  for (const auto& [name, text] : CppHelpers()) {
    if (code.find(name + "(") != std::string::npos) out += text;
  }
  return out;
}

std::string SpellVar(Language lang, int var) {
  if (!ir::IsSizeVar(var)) return fmt::format("i{}", var);
  return fmt::format("{}s{}", lang == Language::kTriton ? "" : "ke_", var - ir::kFirstSizeVar);
}

std::string SpellSize(Language lang, const ir::Expr& e) {
  if (e->kind == ir::ExprKind::kConst) return std::to_string(e->ivalue);
  if (e->kind == ir::ExprKind::kVar) return SpellVar(lang, e->var);
  if (e->kind == ir::ExprKind::kOp && e->args.size() == 2 &&
      (e->op == ir::Prim::kAdd || e->op == ir::Prim::kSub || e->op == ir::Prim::kMul)) {
    const char* op = e->op == ir::Prim::kAdd ? " + " : e->op == ir::Prim::kSub ? " - " : " * ";
    return "(" + SpellSize(lang, e->args[0]) + op + SpellSize(lang, e->args[1]) + ")";
  }
  throw core::InternalError("not a size expression: " + ir::ExprText(e));
}

}  // namespace kernelevolve::operators::codegen
