// Element expressions of the loop IR: constants, loop indices, loads from tensors of
// the program and primitive ops (prim.h). Immutable DAG nodes shared by pointer, so
// one subexpression used twice is printed once. Index arithmetic is int64
// expressions of the same kinds (loop indices, constants, add/mul/floor_div/...).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "operators/ir/prim.h"

namespace kernelevolve::operators::ir {

enum class ExprKind { kConst, kVar, kLoad, kOp };

struct ExprNode;
using Expr = std::shared_ptr<const ExprNode>;

struct ExprNode {
  ExprKind kind = ExprKind::kConst;
  core::DType dtype = core::DType::kFloat32;
  double fvalue = 0;    // kConst of a floating dtype (may be +-inf or NaN)
  int64_t ivalue = 0;   // kConst of an integer or bool dtype
  int var = -1;         // kVar: loop index number (int64)
  int tensor = -1;      // kLoad: the TensorDef read
  Expr mask;            // kLoad: null, or a bool expression; false reads nothing and yields 0
  Prim op = Prim::kAdd;  // kOp
  std::vector<Expr> args;  // kOp: operands; kLoad: one int64 index per dim of the tensor
};

/// A floating constant of `dtype` (float32 or float64).
Expr Float(double value, core::DType dtype = core::DType::kFloat32);
/// An int64 constant (index arithmetic, integer tensors).
Expr Int(int64_t value, core::DType dtype = core::DType::kInt64);
/// A constant of any dtype from a double (integers truncate, bool: nonzero).
Expr Constant(double value, core::DType dtype);
Expr Bool(bool value);
/// The loop index number `k` (int64).
Expr Var(int k);

/// Sizes read at run time (issue 19: inputs whose sizes differ between input sets) are
/// loop-invariant int64 variables numbered from kFirstSizeVar: size symbol k of the
/// program (TensorProgram::symbols) is Var(kFirstSizeVar + k). Loop indices stay below.
constexpr int kFirstSizeVar = 1 << 20;
/// Size symbol `k` as an expression.
Expr SizeVar(int k);
/// True when var number `var` is a size symbol, not a loop index.
inline bool IsSizeVar(int var) { return var >= kFirstSizeVar; }
/// tensor[index...] (row-major, one index per dim); with `mask`, 0 where mask is false.
Expr Load(int tensor, core::DType dtype, std::vector<Expr> index, Expr mask = nullptr);
/// A primitive over `args`. The result dtype is bool for comparisons and logic, else
/// `dtype` (kCast: the target dtype; others: the operands' dtype when `dtype` is
/// omitted). Folds int64 constants and the identities x+0, x*1, x*0 (integers), x/1.
Expr Op(Prim op, std::vector<Expr> args);
Expr Op(Prim op, std::vector<Expr> args, core::DType dtype);
/// x converted to `dtype`; x itself when it already has that dtype.
Expr Cast(Expr x, core::DType dtype);

// Index arithmetic on int64 expressions (folded).
Expr IAdd(Expr a, Expr b);
Expr IMul(Expr a, Expr b);
Expr IAdd(Expr a, int64_t b);
Expr IMul(Expr a, int64_t b);
/// a // b, rounding toward minus infinity.
Expr IFloorDiv(Expr a, int64_t b);
/// Python's a % b (non-negative for b > 0).
Expr IRem(Expr a, int64_t b);

/// a && b of two bool expressions, either of which may be null (no condition).
Expr And(const Expr& a, const Expr& b);
/// 0 <= e < size, for an int64 index `e`.
Expr InRange(const Expr& e, int64_t size);

/// True when the int64 expression `e` is never negative: loop indices, non-negative
/// constants, and sums, products, floor divisions, remainders, minimums and maximums
/// of such (by a positive constant where it divides).
bool KnownNonNegative(const Expr& e);

/// True for a constant; `value` receives it (as double / int64).
bool IsConst(const Expr& e);
bool IsIntConst(const Expr& e, int64_t* value);

/// Rebuilds `e` bottom-up: `var(k)` replaces each kVar, `load(node, new_index,
/// new_mask)` each kLoad (return nullptr to keep the load with the new operands).
/// Shared subexpressions stay shared.
struct Rewriter {
  std::function<Expr(int)> var;
  std::function<Expr(const ExprNode&, std::vector<Expr>, Expr)> load;
};
Expr Rewrite(const Expr& e, const Rewriter& rewriter);

/// `e` with kVar k replaced by vars[k] (vars.size() must cover every loop index used;
/// size symbols are kept).
Expr SubstituteVars(const Expr& e, const std::vector<Expr>& vars);

/// Calls `fn` once per distinct node reachable from `e`, operands before users.
void VisitPostOrder(const Expr& e, const std::function<void(const ExprNode&)>& fn);

/// Number of distinct nodes.
int CountNodes(const Expr& e);

/// A one-line debug rendering, e.g. "add(load(t0, [i0, i1]), 1.0)".
std::string ExprText(const Expr& e);

}  // namespace kernelevolve::operators::ir
