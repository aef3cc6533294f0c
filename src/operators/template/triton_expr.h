// The Triton spelling of elementwise ATen ops, shared by the Triton templates
// (triton_pointwise, triton_rowwise, triton_scan).
#pragma once

#include <map>
#include <string>

#include "core/op_graph.h"

namespace kernelevolve::operators::templates {

/// A Python float literal for a float32 constant: "0.01", "-0.5", "float('inf')".
std::string PythonFloat(double value);

/// True when `target` (e.g. "aten.relu.default") has a Triton rule.
bool HasTritonRule(const std::string& target);

/// The Triton expression of one elementwise call `node`, its tensor operands resolved
/// through `vars` (the node name an argument refers to -> a Python expression or
/// variable). Returns "" and sets `error` (e.g. "no Triton rule yet", "exponent 1.5
/// has no Triton spelling yet") when the call cannot be spelled; clears `error`
/// otherwise. The rules are the C++ pointwise rules minus aten.pow with a general
/// exponent, plus aten.xlogy.Tensor.
std::string TritonElementwiseExpr(const core::OpNode& node,
                                  const std::map<std::string, std::string>& vars,
                                  std::string& error);

}  // namespace kernelevolve::operators::templates
