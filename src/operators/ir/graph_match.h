// Reading a captured graph that one family takes whole: the lone call of a graph
// whose other calls are getitems, its ABI input operand, the getitem outputs and its
// constant arguments. Shared by the matchers of the sort and unique families.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/op_graph.h"

namespace kernelevolve::operators::ir {

/// The graph's one call whose target is in `targets` when every other call is a
/// getitem and the graph has outputs; nullptr otherwise (none, two, or other ops).
const core::OpNode* LoneCall(const core::OpGraph& graph, const std::vector<std::string>& targets);

/// The placeholder or parameter that argument `name` of `call` refers to; nullptr when
/// it is absent, constant or computed.
const core::OpNode* InputOperand(const core::OpGraph& graph, const core::OpNode& call, const std::string& name);

/// Which result of `call` graph node `name` is (its getitem index); -1 when it is not a
/// getitem of `call` with a constant integer index.
int ResultIndex(const core::OpGraph& graph, const std::string& name, const core::OpNode& call);

/// A constant integer argument of `call` (a bool reads as 0 / 1), or `fallback` when
/// absent or null; nullopt when it is a ref (computed at run time) or not an integer.
std::optional<int64_t> ConstInt(const core::OpNode& call, const std::string& name, int64_t fallback);

/// The number a scalar_tensor call holds ("-inf" reads as -infinity) when `arg` refers
/// to one; nullopt otherwise (another node, a constant, another string).
std::optional<double> ScalarTensorValue(const core::OpGraph& graph, const core::OpArg* arg);

/// A constant bool argument of `call`, or `fallback` when absent or null; nullopt when
/// it is a ref or not a bool.
std::optional<bool> ConstBool(const core::OpNode& call, const std::string& name, bool fallback);

}  // namespace kernelevolve::operators::ir
