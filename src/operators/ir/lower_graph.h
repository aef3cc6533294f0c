// Lowering of a captured ATen graph into the loop IR: compound ops (layer/group/
// batch norm, softmax, norms, var/std, losses, nll_loss, max.dim, argmax) become
// elementwise ops, iotas, views and plain reductions.
#pragma once

#include <optional>
#include <string>

#include "core/op_graph.h"
#include "operators/ir/loop_ir.h"

namespace kernelevolve::operators::ir {

/// Result of Lower: a graph, or why the captured graph cannot be lowered.
struct LowerResult {
  std::optional<Graph> graph;
  /// When !graph: "unsupported_op: aten.NAME" (with the reason in parentheses when
  /// the op is known but an argument is not), "unsupported_dtype: ..." or
  /// "unsupported_graph: ...".
  std::string unsupported;
};

/// Lowers every call of `graph`. Float32 tensors only, except int64 inputs used as
/// class targets of nll_loss_forward and int64 outputs of argmax/argmin/max.dim
/// indices. Never throws for an unsupported graph (that is a value).
LowerResult Lower(const core::OpGraph& graph);

/// True when Lower knows `target` (after stripping an in-place suffix, e.g.
/// "aten.add_.Scalar" -> "aten.add.Scalar"), elementwise or compound.
bool IsLowerableTarget(const std::string& target);

/// The out-of-place spelling of an ATen target: "aten.add_.Scalar" -> "aten.add.Scalar".
std::string OutOfPlace(const std::string& target);

}  // namespace kernelevolve::operators::ir
