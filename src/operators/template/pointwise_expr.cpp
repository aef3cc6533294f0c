#include "operators/template/pointwise_expr.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "operators/template/pointwise_rules.h"

namespace kernelevolve::operators::templates {
namespace {

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

/// A C++ identifier for a graph node name, unique within `used`.
std::string Identifier(const std::string& name, std::set<std::string>& used) {
  static const std::set<std::string> kReserved = {
      "and",      "or",       "not",      "xor",     "bitand",   "bitor",    "compl",   "and_eq",
      "or_eq",    "not_eq",   "xor_eq",   "auto",    "bool",     "break",    "case",    "char",
      "class",    "const",    "continue", "default", "delete",   "do",       "double",  "else",
      "enum",     "explicit", "extern",   "false",   "float",    "for",      "friend",  "goto",
      "if",       "inline",   "int",      "long",    "new",      "operator", "private", "protected",
      "public",   "register", "return",   "short",   "signed",   "sizeof",   "static",  "struct",
      "switch",   "template", "this",     "throw",   "true",     "try",      "typedef", "union",
      "unsigned", "using",    "virtual",  "void",    "volatile", "while",    "std",     "errno",
      "INFINITY", "NAN",      "NULL",     "assert"};
  std::string id;
  for (char c : name) id += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0])) || kReserved.count(id) > 0 ||
      id.rfind("ke_", 0) == 0) {
    id = "v_" + id;
  }
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

bool IsInput(const core::OpNode& node) {
  return node.kind == core::OpNodeKind::kPlaceholder || node.kind == core::OpNodeKind::kParameter;
}

PointwiseBuild Fail(std::string why) { return {std::nullopt, std::move(why)}; }

/// Collects the graph's ABI inputs in abi_index order, checking dtype and shape.
std::optional<std::string> CheckInputs(const core::OpGraph& graph,
                                       const std::vector<int64_t>& shape,
                                       std::vector<const core::OpNode*>& inputs) {
  for (const auto& n : graph.nodes) {
    if (!IsInput(n)) continue;
    if (n.dtype != core::DType::kFloat32) {
      return fmt::format(
          "unsupported_dtype: input '{}' is {} (the pointwise template handles "
          "float32)",
          n.name, core::DTypeName(n.dtype));
    }
    if (n.shape != shape) {
      return fmt::format(
          "unsupported_graph: input '{}' has shape {} but the output has {} "
          "(broadcasting is not templated)",
          n.name, ShapeText(n.shape), ShapeText(shape));
    }
    inputs.push_back(&n);
  }
  std::sort(inputs.begin(), inputs.end(), [](const core::OpNode* a, const core::OpNode* b) {
    return a->abi_index < b->abi_index;
  });
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->abi_index != static_cast<int>(i)) {
      return fmt::format(
          "unsupported_graph: input '{}' has abi_index {}, expected {} (inputs must "
          "be numbered 0..{})",
          inputs[i]->name, inputs[i]->abi_index, i, inputs.size() - 1);
    }
  }
  if (inputs.empty()) return std::string("unsupported_graph: the graph has no tensor input");
  return std::nullopt;
}

}  // namespace

std::string FloatLiteral(double value) {
  if (std::isnan(value)) return "NAN";
  if (std::isinf(value)) return value > 0 ? "INFINITY" : "(-INFINITY)";
  std::string text = fmt::format("{}", static_cast<float>(value));
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  text += "f";
  return value < 0 ? "(" + text + ")" : text;
}

bool IsPointwiseTarget(const std::string& target) { return FindPointwiseRule(target) != nullptr; }

PointwiseBuild BuildPointwiseExpr(const core::OpGraph& graph, MathFlavor flavor) {
  const auto calls = graph.Calls();
  for (const core::OpNode* call : calls) {
    if (!IsPointwiseTarget(call->target)) return Fail("unsupported_op: " + call->target);
  }
  if (graph.outputs.size() != 1) {
    return Fail(
        fmt::format("unsupported_graph: {} outputs (the pointwise template writes exactly "
                    "one)",
                    graph.outputs.size()));
  }
  const core::OpNode* out = graph.Find(graph.outputs[0]);
  if (out == nullptr) {
    return Fail("unsupported_graph: output '" + graph.outputs[0] + "' is not a node of the graph");
  }
  if (out->dtype != core::DType::kFloat32) {
    return Fail(
        fmt::format("unsupported_dtype: output '{}' is {} (the pointwise template "
                    "handles float32)",
                    out->name, core::DTypeName(out->dtype)));
  }
  PointwiseExpr expr;
  expr.shape = out->shape;
  std::vector<const core::OpNode*> inputs;
  if (auto why = CheckInputs(graph, expr.shape, inputs)) return Fail(*why);

  std::set<std::string> used;
  std::map<std::string, std::string> vars;  // node name -> C++ variable
  for (const core::OpNode* in : inputs) {
    expr.input_nodes.push_back(in->name);
    expr.input_vars.push_back(Identifier(in->name, used));
    vars[in->name] = expr.input_vars.back();
  }
  for (const core::OpNode* call : calls) {
    const PointwiseRule* rule = FindPointwiseRule(call->target);
    const core::DType want = rule->is_bool ? core::DType::kBool : core::DType::kFloat32;
    if (call->dtype != want) {
      return Fail(fmt::format("unsupported_dtype: node '{}' ({}) is {}, expected {}", call->name,
                              call->target, core::DTypeName(call->dtype), core::DTypeName(want)));
    }
    if (call->shape != expr.shape) {
      return Fail(
          fmt::format("unsupported_graph: node '{}' ({}) has shape {} but the output has "
                      "{} (broadcasting is not templated)",
                      call->name, call->target, ShapeText(call->shape), ShapeText(expr.shape)));
    }
    RuleContext context(*call, vars, flavor);
    std::string rhs = rule->emit(context);
    if (!context.Error().empty()) {
      return Fail(fmt::format("unsupported_op: {} ({})", call->target, context.Error()));
    }
    ExprStatement st{Identifier(call->name, used), rule->is_bool, std::move(rhs), Origin(*call)};
    vars[call->name] = st.var;
    expr.statements.push_back(std::move(st));
  }
  const auto result = vars.find(out->name);
  if (result == vars.end()) {
    return Fail("unsupported_graph: output '" + out->name + "' is not computed by the graph");
  }
  expr.result_var = result->second;
  return {std::move(expr), ""};
}

}  // namespace kernelevolve::operators::templates
