// The closed vocabulary of element math in the loop IR (issue 17): every captured
// ATen op lowers to these primitives, and every backend prints each of them from one
// table (operators/codegen/prim_spelling.h). No ATen names and no backend text here.
#pragma once

#include <string_view>

namespace kernelevolve::operators::ir {

/// One element-level primitive. Operand dtypes are equal unless stated (the lowering
/// casts first); the result dtype is the operands' unless stated.
enum class Prim {
  // Arithmetic on any numeric dtype.
  kAdd, kSub, kMul,
  kDiv,        // floats: IEEE division; integers: C++ truncation toward zero
  kFloorDiv,   // integers: rounds toward minus infinity (torch.div(rounding_mode="floor"))
  kRemainder,  // the result has the divisor's sign (Python's %, torch.remainder)
  kFmod,       // the result has the dividend's sign (C fmod, torch.fmod)
  kNeg, kAbs,
  kMaximum, kMinimum,  // NaN-propagating for floats (torch.maximum / torch.minimum)
  kPow,                // floats: std::pow; integers: repeated multiplication
  kSign,               // -1, 0 or 1 (NaN stays NaN)
  // Float math (float32 / float64 operands).
  kExp, kExpm1, kLog, kLog2, kLog10, kLog1p, kSqrt, kRsqrt,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kTanh, kAsinh, kAcosh, kAtanh,
  kAtan2, kErf, kErfc, kSigmoid,
  kFloor, kCeil, kRound,  // kRound: half to even (torch.round)
  kTrunc,
  // Comparisons and tests: bool result.
  kEq, kNe, kLt, kLe, kGt, kGe, kIsNan, kIsInf,
  // Logic on bool operands.
  kLogicalAnd, kLogicalOr, kLogicalXor, kLogicalNot,
  // Bits on integer or bool operands.
  kBitAnd, kBitOr, kBitXor, kBitNot, kShiftLeft, kShiftRight,
  // kWhere(cond: bool, a, b): a where cond else b (both evaluated).
  kWhere,
  // kCast(x): x converted to the node's dtype (floats to integers truncate; any
  // nonzero to bool is true).
  kCast,
};

/// The number of primitives (kCast is last).
inline constexpr int kPrimCount = static_cast<int>(Prim::kCast) + 1;

enum class PrimClass { kArithmetic, kFloatMath, kCompare, kLogic, kBitwise, kSelect, kCast };

struct PrimInfo {
  std::string_view name;  // "add", "floor_div", ...
  int arity;              // operands
  PrimClass cls;
};

/// Name, arity and class of `p`.
const PrimInfo& Info(Prim p);

/// True for the primitives whose result is bool (comparisons and tests, logic).
bool ReturnsBool(Prim p);

}  // namespace kernelevolve::operators::ir
