// How each primitive of the loop IR (ir/prim.h) is written in each language: one
// table, a row per (primitive, operand kind), a column per language. The emitters
// (cpp/, triton/) print expressions only through this table, so adding a primitive
// or a language is one row or one column.
#pragma once

#include <string>
#include <vector>

#include "core/dtype.h"
#include "operators/ir/expr.h"
#include "operators/ir/tensor_program.h"

namespace kernelevolve::operators::codegen {

enum class Language {
  kCppScalar,  // C++17 with <cmath> (libm)
  kCppVector,  // C++17, float32 math through the branch-free prelude (template/math_prelude.h)
  kTriton,     // Triton 3.x (triton.language as tl) inside an @triton.jit function
};

/// The expression computing `op` over operands already printed as `args` (names or
/// constants: each may be repeated in the text), whose dtype is `operand` (the
/// condition's value operand for kWhere) and whose result is `result`. Throws
/// core::InternalError for a primitive the language has no spelling for at that
/// dtype (the table covers every primitive for float and integer operands).
std::string SpellPrim(Language lang, ir::Prim op, core::DType operand, core::DType result,
                      const std::vector<std::string>& args);

/// The primitive to spell for op node `e`: integer floor division and remainder
/// of a dividend known non-negative by a positive constant are C's / and % (the
/// index arithmetic of views), else e.op.
ir::Prim SpellingPrim(const ir::ExprNode& e);

/// A constant node as a literal of its dtype (C++: 1.5f, INFINITY, INT64_C(3), true;
/// Triton: 1.5, float('inf'), 3, True).
std::string SpellConstant(Language lang, const ir::ExprNode& constant);

/// The element type: C++ "float", "double", "int64_t", "bool", "_Float16" (GCC 12+ on
/// x86-64), "uint16_t" for bfloat16 (its bits; casts convert through
/// ke_bf16_to_float / ke_float_to_bf16, CppHelpersFor); Triton "tl.float32",
/// "tl.int64", "tl.int1", "tl.bfloat16", ...
std::string SpellType(Language lang, core::DType dtype);

/// The identity a reduction `op` over values of `value` starts from: 0 (sum), 1 (prod),
/// the lowest value (max, argmax: -inf for floating point), the highest (min, argmin),
/// false (any), true (all). C++: "-INFINITY", "std::numeric_limits<int32_t>::lowest()",
/// "false"; Triton: "float('-inf')", "-2147483648" (int64: its own limits; narrower
/// integers are compared as int32), 0 / 1 for any / all (int32 accumulators).
std::string SpellReduceIdentity(Language lang, ir::ReduceOp op, core::DType value);

/// The name of var number `var`: a loop index i<k>, or a size read at run time
/// (ir::IsSizeVar): ke_s<k> in C++, s<k> in Triton (a kernel argument).
std::string SpellVar(Language lang, int var);

/// A size expression (int64 constants, size symbols, +, -, *) as text of `lang`.
/// Throws core::InternalError for any other expression.
std::string SpellSize(Language lang, const ir::Expr& size);

/// The helper functions the C++ spellings call (ke_floor_div, ke_rem, ke_ipow, ...),
/// for those whose name occurs in `code`; empty when none does.
std::string CppHelpersFor(const std::string& code);

}  // namespace kernelevolve::operators::codegen
