// One rule per supported elementwise ATen op: how to spell it as a C++ expression.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/op_graph.h"
#include "operators/template/pointwise_expr.h"

namespace kernelevolve::operators::templates {

/// What a rule sees while spelling one call node: its arguments, resolved to C++
/// text, and the math flavor. Problems with an argument are recorded (first one
/// wins) instead of thrown; the caller turns them into an "unsupported_op" reason.
class RuleContext {
 public:
  /// `vars` maps graph node names already computed to their C++ variables.
  RuleContext(const core::OpNode& node, const std::map<std::string, std::string>& vars,
              MathFlavor flavor)
      : node_(node), vars_(vars), flavor_(flavor) {}

  /// The argument as an operand: the variable of the node it refers to, or a float
  /// literal for a number/bool constant.
  std::string Operand(const std::string& name);
  /// The argument as a numeric constant (bool -> 0/1).
  double Number(const std::string& name);
  /// A numeric constant, or nullopt when the argument is null or absent.
  std::optional<double> OptionalNumber(const std::string& name);
  /// A string constant (e.g. gelu's `approximate`).
  std::string Text(const std::string& name);

  /// Flavor-dependent math spellings of `arg` (an identifier or literal).
  std::string Exp(const std::string& arg) const;
  std::string Expm1(const std::string& arg) const;
  std::string Log(const std::string& arg) const;
  std::string Log1p(const std::string& arg) const;
  std::string Tanh(const std::string& arg) const;
  std::string Erf(const std::string& arg) const;
  std::string Sigmoid(const std::string& arg) const;
  /// log(1 + e^arg), without softplus's threshold.
  std::string Softplus(const std::string& arg) const;
  /// `cond ? a : b`; with the prelude `ke_select(cond, a, b)`, which evaluates both
  /// operands so the select vectorizes even when a branch calls the prelude.
  std::string Select(const std::string& cond, const std::string& a, const std::string& b) const;

  /// Records a problem (kept only if it is the first).
  void Fail(const std::string& why) {
    if (error_.empty()) error_ = why;
  }
  const std::string& Error() const { return error_; }

 private:
  const core::OpArg* Need(const std::string& name);
  const core::OpNode& node_;
  const std::map<std::string, std::string>& vars_;
  MathFlavor flavor_;
  std::string error_;
};

/// How one ATen target is spelled.
struct PointwiseRule {
  std::string (*emit)(RuleContext&);  // the right-hand side of the node's statement
  bool is_bool = false;               // result is bool (comparisons)
};

/// The rule for a target such as "aten.relu.default", or nullptr when none.
const PointwiseRule* FindPointwiseRule(const std::string& target);

}  // namespace kernelevolve::operators::templates
