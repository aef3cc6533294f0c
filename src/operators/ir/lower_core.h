// Lowering of a captured graph (Core ATen opset plus the compound ops the capture
// keeps, worker/kernelevolve_worker/core_aten.py) into a TensorProgram: every op,
// heavy ones included, becomes element, reduction or scan definitions built from the
// primitive vocabulary (prim.h). This is what makes every captured graph compile;
// the specialized families keep matching first where they apply.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "operators/ir/tensor_program.h"

namespace kernelevolve::operators::ir {

/// A program, or why the graph has none.
struct CoreLowerResult {
  std::optional<TensorProgram> program;
  /// When !program: "unsupported_op: aten.NAME (node N)" for an op without a
  /// lowering, with the reason in parentheses for a known op whose arguments are not
  /// supported; "unsupported_dtype: ..." (complex values);
  /// "unsupported_graph: ..." otherwise.
  std::string unsupported;
};

/// Lowers every node of `graph` (inputs: placeholders and parameters with their
/// abi_index; outputs in graph.outputs order). Dtypes: float32, float64, the integer
/// dtypes and bool; float16 and bfloat16 as storage: an input of either is widened to
/// float32 on load, each half-precision node computes in float32 and its result is
/// rounded to its type (as eager's at::opmath_type), and a half-precision output is
/// stored in its type. Never throws for an unsupported graph.
CoreLowerResult LowerCore(const core::OpGraph& graph);

/// One lowering rule, for docs and coverage checks.
struct LoweringRow {
  std::string target;  // "aten.add.Tensor"
  std::string how;     // one phrase: "element: add (alpha folded)", "reduce sum over k"
};

/// Every ATen overload LowerCore knows, sorted by target.
std::vector<LoweringRow> CoreLoweringTable();

}  // namespace kernelevolve::operators::ir
