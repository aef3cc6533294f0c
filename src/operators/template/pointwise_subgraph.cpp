#include "operators/template/pointwise_subgraph.h"

#include <fmt/format.h>

#include <cctype>
#include <set>

#include "operators/template/pointwise_rules.h"

namespace kernelevolve::operators::templates {
namespace {

constexpr const char* kToCopy = "aten._to_copy.default";

PointwiseBuild Fail(std::string why) { return {std::nullopt, std::move(why)}; }

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

/// "v_" + the node name with every character outside [A-Za-z0-9_] replaced by '_',
/// unique within `used` (the prefix keeps it clear of keywords and ke_ names).
std::string Variable(const std::string& name, std::set<std::string>& used) {
  std::string id = "v_";
  for (char c : name) id += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  while (used.count(id) > 0) id += "_";
  used.insert(id);
  return id;
}

std::string Origin(const core::OpNode& node) {
  std::vector<std::string> parts;
  for (const auto& a : node.args) {
    parts.push_back(a.name + "=" + (a.IsRef() ? a.ref : a.value.dump()));
  }
  return fmt::format("{}({})", node.target, fmt::join(parts, ", "));
}

std::string Resolve(const std::map<std::string, std::string>& aliases, std::string name) {
  for (int hops = 0; hops < 1000; ++hops) {
    const auto it = aliases.find(name);
    if (it == aliases.end()) break;
    name = it->second;
  }
  return name;
}

/// Marks every node `name` depends on (aliases resolved, stopping at leaves) in
/// `needed`; returns a reason when it reaches a graph input that is not a leaf or a
/// missing node.
std::optional<std::string> MarkNeeded(const core::OpGraph& graph, const SubgraphRequest& request,
                                      const std::set<std::string>& leaves, const std::string& name,
                                      std::set<std::string>& needed) {
  const std::string node_name = Resolve(request.aliases, name);
  if (leaves.count(node_name) > 0 || !needed.insert(node_name).second) return std::nullopt;
  const core::OpNode* node = graph.Find(node_name);
  if (node == nullptr) {
    return "unsupported_graph: '" + node_name + "' is referenced but is not a node of the graph";
  }
  if (node->kind != core::OpNodeKind::kCall) {
    return "unsupported_graph: '" + node_name + "' is read where only " +
           "elementwise values of the same index are allowed";
  }
  for (const auto& arg : node->args) {
    if (!arg.IsRef()) continue;
    if (auto why = MarkNeeded(graph, request, leaves, arg.ref, needed)) return why;
  }
  return std::nullopt;
}

/// aten._to_copy.default between float32 and bool (dtype changes only).
std::string ToCopy(const core::OpNode& call, const std::map<std::string, std::string>& vars,
                   const std::set<std::string>& bool_vars, std::string& error) {
  const core::OpArg* self = call.Arg("self");
  if (self == nullptr || !self->IsRef() || vars.count(self->ref) == 0) {
    error = "its 'self' is not an elementwise value";
    return "";
  }
  const std::string& a = vars.at(self->ref);
  const bool from_bool = bool_vars.count(a) > 0;
  if (call.dtype == core::DType::kFloat32) return from_bool ? "static_cast<float>(" + a + ")" : a;
  return from_bool ? a : "(" + a + " != 0.0f)";
}

}  // namespace

PointwiseBuild BuildSubgraphExpr(const core::OpGraph& graph, MathFlavor flavor,
                                 const SubgraphRequest& request) {
  std::set<std::string> leaf_names;
  for (const auto& leaf : request.leaves) leaf_names.insert(leaf.node);
  std::set<std::string> needed;
  if (auto why = MarkNeeded(graph, request, leaf_names, request.result, needed)) return Fail(*why);

  PointwiseExpr expr;
  expr.shape = request.shape;
  std::set<std::string> used;
  std::set<std::string> bool_vars;
  std::map<std::string, std::string> vars;  // node name (or alias) -> C++ variable
  for (const auto& leaf : request.leaves) {
    expr.input_nodes.push_back(leaf.node);
    expr.input_vars.push_back(Variable(leaf.node, used));
    vars[leaf.node] = expr.input_vars.back();
    if (leaf.is_bool) bool_vars.insert(expr.input_vars.back());
  }
  auto add_aliases = [&] {
    for (const auto& [alias, source] : request.aliases) {
      const auto it = vars.find(Resolve(request.aliases, source));
      if (it != vars.end()) vars[alias] = it->second;
    }
  };
  add_aliases();
  for (const auto& node : graph.nodes) {
    if (needed.count(node.name) == 0) continue;
    const bool to_copy = node.target == kToCopy;
    const PointwiseRule* rule = FindPointwiseRule(node.target);
    if (rule == nullptr && !to_copy) return Fail("unsupported_op: " + node.target);
    const bool is_bool = to_copy ? node.dtype == core::DType::kBool : rule->is_bool;
    const core::DType want = is_bool ? core::DType::kBool : core::DType::kFloat32;
    if (node.dtype != want) {
      return Fail(fmt::format("unsupported_dtype: node '{}' ({}) is {}, expected {}", node.name,
                              node.target, core::DTypeName(node.dtype), core::DTypeName(want)));
    }
    if (node.shape != request.shape) {
      return Fail(fmt::format(
          "unsupported_graph: node '{}' ({}) has shape {}, expected {} (broadcasting is not "
          "templated)",
          node.name, node.target, ShapeText(node.shape), ShapeText(request.shape)));
    }
    std::string rhs;
    std::string error;
    if (to_copy) {
      rhs = ToCopy(node, vars, bool_vars, error);
    } else {
      RuleContext context(node, vars, flavor);
      rhs = rule->emit(context);
      error = context.Error();
    }
    if (!error.empty()) return Fail(fmt::format("unsupported_op: {} ({})", node.target, error));
    ExprStatement st{Variable(node.name, used), is_bool, std::move(rhs), Origin(node)};
    vars[node.name] = st.var;
    if (is_bool) bool_vars.insert(st.var);
    expr.statements.push_back(std::move(st));
    add_aliases();
  }
  const auto result = vars.find(Resolve(request.aliases, request.result));
  if (result == vars.end()) {
    return Fail("unsupported_graph: '" + request.result + "' is not computed by the graph");
  }
  if (bool_vars.count(result->second) > 0) {
    return Fail("unsupported_dtype: '" + request.result + "' is bool, expected float32");
  }
  expr.result_var = result->second;
  return {std::move(expr), ""};
}

}  // namespace kernelevolve::operators::templates
