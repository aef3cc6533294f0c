#include "operators/ir/prim.h"

#include <array>

namespace kernelevolve::operators::ir {
namespace {

using C = PrimClass;

/// One row per Prim, in enum order (checked by a static_assert on the count and by
/// the unit test that walks every primitive).
constexpr std::array<PrimInfo, kPrimCount> kInfo = {{
    {"add", 2, C::kArithmetic},       {"sub", 2, C::kArithmetic},     {"mul", 2, C::kArithmetic},
    {"div", 2, C::kArithmetic},       {"floor_div", 2, C::kArithmetic},
    {"remainder", 2, C::kArithmetic}, {"fmod", 2, C::kArithmetic},    {"neg", 1, C::kArithmetic},
    {"abs", 1, C::kArithmetic},       {"maximum", 2, C::kArithmetic}, {"minimum", 2, C::kArithmetic},
    {"pow", 2, C::kArithmetic},       {"sign", 1, C::kArithmetic},
    {"exp", 1, C::kFloatMath},        {"expm1", 1, C::kFloatMath},    {"log", 1, C::kFloatMath},
    {"log2", 1, C::kFloatMath},       {"log10", 1, C::kFloatMath},    {"log1p", 1, C::kFloatMath},
    {"sqrt", 1, C::kFloatMath},       {"rsqrt", 1, C::kFloatMath},    {"sin", 1, C::kFloatMath},
    {"cos", 1, C::kFloatMath},        {"tan", 1, C::kFloatMath},      {"asin", 1, C::kFloatMath},
    {"acos", 1, C::kFloatMath},       {"atan", 1, C::kFloatMath},     {"sinh", 1, C::kFloatMath},
    {"cosh", 1, C::kFloatMath},       {"tanh", 1, C::kFloatMath},     {"asinh", 1, C::kFloatMath},
    {"acosh", 1, C::kFloatMath},      {"atanh", 1, C::kFloatMath},    {"atan2", 2, C::kFloatMath},
    {"erf", 1, C::kFloatMath},        {"erfc", 1, C::kFloatMath},     {"sigmoid", 1, C::kFloatMath},
    {"floor", 1, C::kFloatMath},      {"ceil", 1, C::kFloatMath},     {"round", 1, C::kFloatMath},
    {"trunc", 1, C::kFloatMath},
    {"eq", 2, C::kCompare},           {"ne", 2, C::kCompare},         {"lt", 2, C::kCompare},
    {"le", 2, C::kCompare},           {"gt", 2, C::kCompare},         {"ge", 2, C::kCompare},
    {"isnan", 1, C::kCompare},        {"isinf", 1, C::kCompare},
    {"logical_and", 2, C::kLogic},    {"logical_or", 2, C::kLogic},   {"logical_xor", 2, C::kLogic},
    {"logical_not", 1, C::kLogic},
    {"bit_and", 2, C::kBitwise},      {"bit_or", 2, C::kBitwise},     {"bit_xor", 2, C::kBitwise},
    {"bit_not", 1, C::kBitwise},      {"shift_left", 2, C::kBitwise}, {"shift_right", 2, C::kBitwise},
    {"where", 3, C::kSelect},
    {"cast", 1, C::kCast},
}};

}  // namespace

const PrimInfo& Info(Prim p) { return kInfo.at(static_cast<size_t>(p)); }

bool ReturnsBool(Prim p) {
  const PrimClass c = Info(p).cls;
  return c == PrimClass::kCompare || c == PrimClass::kLogic;
}

}  // namespace kernelevolve::operators::ir
