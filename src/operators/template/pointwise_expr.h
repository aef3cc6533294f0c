// Turns a captured op graph of elementwise ATen calls into one fused scalar
// expression of the input elements (one named temporary per graph node).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/op_graph.h"

namespace kernelevolve::operators::templates {

/// Which functions the expression calls for transcendental math.
enum class MathFlavor {
  kLibm,     // std::exp, std::tanh, std::erf, ... from <cmath> (not vectorized by GCC)
  kPrelude,  // ke_exp, ke_tanh, ke_erf, ... from the math prelude (math_prelude.h)
  /// kPrelude with the explicit AVX-512 variants where the prelude has one (log:
  /// ke_log_v16, for 16-lane loops; knob math=avx512 of the pointwise template).
  kPreludeAvx512,
};

/// `const <float|bool> var = expr;  // origin`
struct ExprStatement {
  std::string var;  // C++ identifier derived from the graph node name
  bool is_bool = false;
  std::string expr;  // right-hand side, in terms of earlier vars and float literals
  std::string
      origin;  // the ATen call it implements, e.g. "aten.add.Tensor(self=abs_1, other=1, alpha=1)"
};

/// A whole elementwise graph as straight-line code over one element per input.
struct PointwiseExpr {
  std::vector<std::string> input_vars;    // parameter names, in ABI input order
  std::vector<std::string> input_nodes;   // the graph nodes they stand for, same order
  std::vector<ExprStatement> statements;  // graph order
  std::string result_var;                 // the variable written to the output element
  std::vector<int64_t> shape;             // of every input and of the output
};

/// Result of BuildPointwiseExpr: either an expression or why none exists.
struct PointwiseBuild {
  std::optional<PointwiseExpr> expr;
  /// When !expr: "unsupported_op: aten.NAME" (the first call in graph order that no
  /// rule covers, with the reason in parentheses when the op is known but an
  /// argument is not), "unsupported_dtype: ..." or "unsupported_graph: ...".
  std::string unsupported;
};

/// Builds the fused expression when every call is a supported elementwise op on
/// float32 tensors of the output's shape (bool for comparisons), every input is a
/// float32 tensor of that shape and the graph has one output. Never throws for an
/// unsupported graph (that is a value).
PointwiseBuild BuildPointwiseExpr(const core::OpGraph& graph, MathFlavor flavor);

/// True when `target` (e.g. "aten.relu.default") has a pointwise rule.
bool IsPointwiseTarget(const std::string& target);

/// A float literal that parses back to the same float32 value: "0.01f", "1.0f",
/// "(-0.5f)", "INFINITY", "NAN" (shortest round-trip digits, negatives in parentheses).
std::string FloatLiteral(double value);

}  // namespace kernelevolve::operators::templates
