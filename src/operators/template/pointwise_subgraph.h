// Straight-line code for one value of a captured graph computed elementwise from
// chosen "leaf" values (graph inputs, or an intermediate such as a scan's result):
// the sub-graph generalization of BuildPointwiseExpr, used by templates that fuse a
// pointwise prologue / epilogue around a non-elementwise op.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/op_graph.h"
#include "operators/template/pointwise_expr.h"

namespace kernelevolve::operators::templates {

/// A value the sub-graph takes as given: a graph node, and whether it is bool.
struct SubgraphLeaf {
  std::string node;
  bool is_bool = false;
};

/// What BuildSubgraphExpr reads besides the graph.
struct SubgraphRequest {
  std::vector<SubgraphLeaf> leaves;  // become PointwiseExpr::input_vars, in this order
  std::string result;                // the node whose value the expression returns
  /// Nodes that stand for another node's value elementwise (e.g. a flip whose
  /// reindexing the caller handles): alias -> source. Followed transitively.
  std::map<std::string, std::string> aliases;
  std::vector<int64_t> shape;  // every call on the way must have this shape
};

/// Builds the statements computing `request.result` from the leaves: only the calls
/// the result needs, in graph order, each spelled by its pointwise rule (plus
/// aten._to_copy.default between float32 and bool). A leaf's variable is "v_" + its
/// sanitized node name. Returns the expression, or an "unsupported_op: ..." /
/// "unsupported_dtype: ..." / "unsupported_graph: ..." reason when a needed node is
/// a graph input that is not a leaf, a call no rule covers, a call of another shape
/// or of a dtype other than float32 (bool for comparisons). Never throws for an
/// unsupported graph. `shape` of the result is request.shape.
PointwiseBuild BuildSubgraphExpr(const core::OpGraph& graph, MathFlavor flavor,
                                 const SubgraphRequest& request);

}  // namespace kernelevolve::operators::templates
