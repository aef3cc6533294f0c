// A captured graph as a program of tensor definitions (issue 17): every value is an
// ABI input, or is defined element by element by an expression over its own indices
// (compute), by a reduction of such an expression over extra indices (reduce), or by
// a running scan along one dim (scan). Heavy ops (mm, convolution, pooling, ...)
// lower to reductions with an index-computing body, so every graph has a correct
// loop-nest program; kernel_plan.h decides which definitions become kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "operators/ir/expr.h"
#include "operators/ir/loop_ir.h"  // Numel, ShapeText

namespace kernelevolve::operators::ir {

enum class DefKind { kInput, kCompute, kReduce, kScan };

/// Reductions: kArgMax / kArgMin give the int64 flat position (row-major over the
/// reduced extents) of the first maximum / minimum, NaN counting as the maximum and
/// the minimum (torch.argmax: the first NaN); kArgMaxLastNaN is max pooling's index,
/// the first maximum or else the *last* NaN (ATen's pooling kernels keep a value when
/// `val > max || isnan(val)`, aten/src/ATen/native/cpu/MaxPoolKernel.cpp and
/// AdaptiveMaxPoolKernel.cpp); kMax / kMin propagate NaN; kAny / kAll over bool.
enum class ReduceOp { kSum, kProd, kMax, kMin, kArgMax, kArgMin, kArgMaxLastNaN, kAny, kAll };

/// True for the reductions that give a position (int64) rather than a value.
inline bool IsArgReduce(ReduceOp op) {
  return op == ReduceOp::kArgMax || op == ReduceOp::kArgMin || op == ReduceOp::kArgMaxLastNaN;
}

/// Inclusive scans (torch.cumsum, cumprod, cummax values, cummin values).
enum class ScanOp { kSum, kProd, kMax, kMin };

struct TensorDef {
  int id = -1;
  DefKind kind = DefKind::kCompute;
  core::DType dtype = core::DType::kFloat32;
  std::vector<int64_t> shape;
  int abi_index = -1;  // kInput: position in the entry's input list
  /// kCompute / kScan: the element at indices (i0 .. i{rank-1}) as an expression of
  /// kVar 0 .. rank-1. kReduce: the term at output indices (vars 0 .. rank-1) and
  /// reduced indices (vars rank .. rank + reduce_extents.size() - 1).
  Expr body;
  std::vector<int64_t> reduce_extents;  // kReduce
  ReduceOp reduce = ReduceOp::kSum;     // kReduce
  int scan_dim = -1;                    // kScan: the dim scanned, in order
  ScanOp scan = ScanOp::kSum;           // kScan
  std::string origin;                   // the captured node, e.g. "mm (aten.mm.default)"
  std::string backend;                  // that node's core::OpNode::backend ("cudnn" or "")
  /// Sizes that depend on input sizes read at run time (TensorProgram::symbols): when
  /// non-empty, one int64 expression per dim of `shape` (resp. `reduce_extents`) over
  /// size symbols (SizeVar); `shape` / `reduce_extents` then hold the first input set's
  /// values, a hint for schedules. Empty: the sizes are the constants in `shape`.
  std::vector<Expr> symbolic_shape;
  std::vector<Expr> symbolic_reduce_extents;
};

/// A size read at run time: dim `dim` of ABI input `abi_index` (`value`: the first
/// input set's).
///
/// [min_value, max_value]: the sizes seen on the input sets. The lowering's choices
/// (a clamp folded away, the number of binary-lifting steps) hold there and are not
/// known to hold outside, so the entry refuses other sizes (return 3).
struct SizeSymbol {
  int abi_index = -1;
  int dim = -1;
  int64_t value = 0;
  int64_t min_value = 0;
  int64_t max_value = 0;
};

struct TensorProgram {
  std::vector<TensorDef> defs;  // topological order; defs[k].id == k
  std::vector<int> outputs;     // def ids in ABI output order
  int num_inputs = 0;           // ABI inputs (placeholders and parameters)
  std::vector<SizeSymbol> symbols;  // SizeVar(k) is symbols[k]; empty: every size fixed
};

/// The sizes of `def` (resp. its reduced extents) as int64 expressions: its symbolic
/// ones, or constants.
std::vector<Expr> Extents(const TensorDef& def);
std::vector<Expr> ReduceExtents(const TensorDef& def);

/// `def`'s shape as text: "[4, 8]", or with sizes read at run time "[s0, 8]".
std::string SizesText(const TensorDef& def);

/// The flat row-major offset of `index` in a tensor of `extents` (folded int64 expr).
Expr FlatOffset(const std::vector<Expr>& index, const std::vector<Expr>& extents);

/// Row-major strides of a contiguous tensor of `shape`, in elements.
std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape);

/// The flat row-major offset of `index` in a tensor of `shape` (folded int64 expr).
Expr FlatOffset(const std::vector<Expr>& index, const std::vector<int64_t>& shape);

/// The indices of flat position `flat` in a tensor of `shape` (div / mod chains).
std::vector<Expr> Unflatten(const Expr& flat, const std::vector<int64_t>& shape);

/// Vars 0 .. rank-1 as expressions.
std::vector<Expr> IndexVars(size_t rank, int first = 0);

}  // namespace kernelevolve::operators::ir
