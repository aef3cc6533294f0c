#include "operators/template/triton_matmul_graph.h"

#include <fmt/format.h>

#include <map>
#include <set>

#include "operators/template/triton_expr.h"

namespace kernelevolve::operators::templates {
namespace {

/// What a node of the graph is, seen from the kernel.
struct Value {
  bool is_input = false;  // an ABI input (possibly through views); else a computed tile
  int abi_index = -1;     // inputs
  bool transposed = false;
  std::vector<int64_t> shape;
  core::DType dtype = core::DType::kFloat32;
  std::string var;  // computed tiles: the Python variable
  bool from_matmul = false;
};

const std::set<std::string>& TransposeOps() {
  static const std::set<std::string> ops = {"aten.t.default", "aten.transpose.int",
                                            "aten.permute.default"};
  return ops;
}

const std::set<std::string>& ReshapeOps() {
  static const std::set<std::string> ops = {"aten.view.default",    "aten._unsafe_view.default",
                                            "aten.reshape.default", "aten.unsqueeze.default",
                                            "aten.squeeze.dim",     "aten.squeeze.default",
                                            "aten.expand.default"};
  return ops;
}

std::optional<EpilogueBroadcast> Classify(std::vector<int64_t> shape, int64_t m, int64_t n) {
  int64_t numel = 1;
  for (int64_t d : shape) numel *= d;
  if (numel == 1) return EpilogueBroadcast::kScalar;
  while (shape.size() > 2 && shape.front() == 1) shape.erase(shape.begin());
  if (shape.size() == 1 && shape[0] == n) return EpilogueBroadcast::kRow;
  if (shape.size() != 2) return std::nullopt;
  if (shape[0] == m && shape[1] == n) return EpilogueBroadcast::kFull;
  if (shape[0] == 1 && shape[1] == n) return EpilogueBroadcast::kRow;
  if (shape[0] == m && shape[1] == 1) return EpilogueBroadcast::kColumn;
  return std::nullopt;
}

bool IsSupportedOperandDType(core::DType d) {
  return d == core::DType::kFloat16 || d == core::DType::kBFloat16 || d == core::DType::kFloat32;
}

/// The reference argument `name` of `node`, or "".
std::string Ref(const core::OpNode& node, const std::string& name) {
  const core::OpArg* arg = node.Arg(name);
  return arg != nullptr && arg->IsRef() ? arg->ref : "";
}

double NumberOr(const core::OpNode& node, const std::string& name, double fallback) {
  const core::OpArg* arg = node.Arg(name);
  return arg != nullptr && arg->value.is_number() ? arg->value.get<double>() : fallback;
}

/// True when a transpose-like call swaps the two dims of a 2-D tensor.
bool SwapsTwoDims(const core::OpNode& node) {
  if (node.target == "aten.t.default") return true;
  if (node.target == "aten.transpose.int") {
    const int64_t d0 = static_cast<int64_t>(NumberOr(node, "dim0", 0)),
                  d1 = static_cast<int64_t>(NumberOr(node, "dim1", 0));
    return ((d0 + 2) % 2) != ((d1 + 2) % 2);
  }
  const core::OpArg* dims = node.Arg("dims");
  return dims != nullptr && dims->value == nlohmann::json::array({1, 0});
}

class Matcher {
 public:
  explicit Matcher(const core::OpGraph& graph) : graph_(graph) {}

  TritonMatmulMatch Run(const core::OpNode& mm) {
    if (!Dims(mm)) return Fail();
    for (const auto& node : graph_.nodes) {
      if (!Visit(node, mm)) return Fail();
    }
    if (graph_.outputs.size() != 1)
      return Fail(fmt::format("unsupported_graph: {} outputs (the matmul template writes one)",
                              graph_.outputs.size()));
    const auto out = values_.find(graph_.outputs[0]);
    if (out == values_.end() || out->second.is_input || !out->second.from_matmul) {
      return Fail("unsupported_graph: the output is not computed from the matmul");
    }
    if (Classify(out->second.shape, spec_.m, spec_.n) != EpilogueBroadcast::kFull) {
      return Fail("unsupported_graph: the output is not the [M, N] result");
    }
    const core::OpNode* out_node = graph_.Find(graph_.outputs[0]);
    spec_.out_dtype = out_node->dtype;
    if (!core::IsFloatingPoint(spec_.out_dtype) || spec_.out_dtype == core::DType::kFloat64) {
      return Fail(fmt::format("unsupported_dtype: output {} (float16, bfloat16 or float32)",
                              core::DTypeName(spec_.out_dtype)));
    }
    spec_.result_var = out->second.var;
    return {std::move(spec_), ""};
  }

 private:
  TritonMatmulMatch Fail(const std::string& why = "") {
    return {std::nullopt, why.empty() ? error_ : why};
  }
  bool Error(std::string why) {
    error_ = std::move(why);
    return false;
  }

  /// M, N, K from the matmul's operand shapes.
  bool Dims(const core::OpNode& mm) {
    const auto [left, right] = OperandNames(mm);
    const core::OpNode* a = graph_.Find(left);
    const core::OpNode* b = graph_.Find(right);
    if (a == nullptr || b == nullptr)
      return Error("unsupported_graph: " + mm.target + " has a constant operand");
    if (a->shape.size() != 2 || b->shape.size() != 2) {
      return Error(fmt::format(
          "unsupported_graph: {} of {}-D by {}-D tensors (the matmul template is 2-D only)",
          mm.target, a->shape.size(), b->shape.size()));
    }
    const bool linear = mm.target == "aten.linear.default";
    spec_.m = a->shape[0];
    spec_.k = a->shape[1];
    spec_.n = linear ? b->shape[0] : b->shape[1];
    if ((linear ? b->shape[1] : b->shape[0]) != spec_.k)
      return Error("unsupported_graph: inner dims differ");
    return true;
  }

  static std::pair<std::string, std::string> OperandNames(const core::OpNode& mm) {
    if (mm.target == "aten.addmm.default") return {Ref(mm, "mat1"), Ref(mm, "mat2")};
    if (mm.target == "aten.linear.default") return {Ref(mm, "input"), Ref(mm, "weight")};
    if (mm.target == "aten.matmul.default") return {Ref(mm, "self"), Ref(mm, "other")};
    return {Ref(mm, "self"), Ref(mm, "mat2")};
  }

  bool Visit(const core::OpNode& node, const core::OpNode& mm) {
    if (node.kind != core::OpNodeKind::kCall) {
      values_[node.name] = {true, node.abi_index, false, node.shape, node.dtype, "", false};
      return true;
    }
    if (&node == &mm) return VisitMatmul(node);
    if (TransposeOps().count(node.target) > 0 || ReshapeOps().count(node.target) > 0)
      return VisitView(node);
    if (IsMatmulTarget(node.target))
      return Error("unsupported_graph: more than one matmul (" + node.target + ")");
    return VisitElementwise(node);
  }

  bool VisitView(const core::OpNode& node) {
    const auto it = values_.find(Ref(node, "self"));
    if (it == values_.end()) return Error("unsupported_graph: " + node.target + " of a constant");
    Value v = it->second;
    if (TransposeOps().count(node.target) > 0) {
      if (v.shape.size() != 2 || !SwapsTwoDims(node))
        return Error("unsupported_graph: " + node.target + " other than a 2-D transpose");
      if (!v.is_input) return Error("unsupported_graph: a transpose of a computed tile");
      v.transposed = !v.transposed;
      std::swap(v.shape[0], v.shape[1]);
    } else {
      if (v.transposed)
        return Error("unsupported_graph: " + node.target + " of a transposed input");
      // expand keeps the source's layout: broadcasting the source gives the same values.
      if (node.target != "aten.expand.default") v.shape = node.shape;
      if (!v.is_input &&
          Classify(v.shape, spec_.m, spec_.n) != Classify(it->second.shape, spec_.m, spec_.n)) {
        return Error("unsupported_graph: " + node.target + " reshapes a computed tile");
      }
    }
    values_[node.name] = v;
    return true;
  }

  bool ResolveOperand(const std::string& name, bool transpose, MatmulOperand& out,
                      const std::string& target) {
    const auto it = values_.find(name);
    if (it == values_.end() || !it->second.is_input) {
      return Error("unsupported_graph: an operand of " + target +
                   " is computed (prologue ops are not fused)");
    }
    const Value& v = it->second;
    if (!IsSupportedOperandDType(v.dtype)) {
      return Error(fmt::format("unsupported_dtype: {} operand {} (float16, bfloat16 or float32)",
                               target, core::DTypeName(v.dtype)));
    }
    if (&out == &spec_.b && v.dtype != spec_.dtype) {
      return Error("unsupported_dtype: the matmul operands differ in dtype");
    }
    spec_.dtype = v.dtype;
    out = {v.abi_index, v.transposed != transpose};
    return true;
  }

  bool VisitMatmul(const core::OpNode& mm) {
    const auto [left, right] = OperandNames(mm);
    if (!ResolveOperand(left, false, spec_.a, mm.target)) return false;
    if (!ResolveOperand(right, mm.target == "aten.linear.default", spec_.b, mm.target))
      return false;
    spec_.ops.push_back(mm.target);
    Value acc{false, -1, false, mm.shape, mm.dtype, "acc", true};
    const std::string bias = mm.target == "aten.addmm.default"    ? Ref(mm, "self")
                             : mm.target == "aten.linear.default" ? Ref(mm, "bias")
                                                                  : "";
    if (!bias.empty()) {
      const std::string bias_var = Operand(bias);
      if (bias_var.empty()) return false;
      const double alpha = NumberOr(mm, "alpha", 1), beta = NumberOr(mm, "beta", 1);
      const std::string lhs = alpha == 1 ? "acc" : "acc * " + PythonFloat(alpha);
      const std::string rhs = beta == 1 ? bias_var : bias_var + " * " + PythonFloat(beta);
      acc.var = NextVar();
      spec_.lines.push_back(fmt::format("{} = {} + {}  # {} bias", acc.var, lhs, rhs, mm.target));
    }
    values_[mm.name] = acc;
    return true;
  }

  /// The Python variable of an epilogue operand (an input is loaded once per broadcast
  /// class), or "" after setting the error.
  std::string Operand(const std::string& name) {
    const auto it = values_.find(name);
    if (it == values_.end()) {
      Error("unsupported_graph: unknown node " + name);
      return "";
    }
    const Value& v = it->second;
    const auto cls = Classify(v.shape, spec_.m, spec_.n);
    if (!cls) {
      Error(fmt::format(
          "unsupported_graph: {} of shape {} does not broadcast over the [{}, {}] result", name,
          nlohmann::json(v.shape).dump(), spec_.m, spec_.n));
      return "";
    }
    if (!v.is_input) return v.var;
    if (v.transposed) {
      Error("unsupported_graph: the epilogue reads a transposed input");
      return "";
    }
    if (!core::IsFloatingPoint(v.dtype) && v.dtype != core::DType::kBool) {
      Error(fmt::format("unsupported_dtype: epilogue input {} is {}", name,
                        core::DTypeName(v.dtype)));
      return "";
    }
    for (const auto& in : spec_.inputs) {
      if (in.abi_index == v.abi_index && in.broadcast == *cls) return in.var;
    }
    spec_.inputs.push_back({v.abi_index, *cls, v.dtype, fmt::format("e{}", spec_.inputs.size())});
    return spec_.inputs.back().var;
  }

  bool VisitElementwise(const core::OpNode& node) {
    if (!HasTritonRule(node.target))
      return Error("unsupported_op: " + node.target + " (no Triton rule yet)");
    if (!Classify(node.shape, spec_.m, spec_.n)) {
      return Error(fmt::format(
          "unsupported_graph: {} gives shape {}, which does not broadcast over [{}, {}]",
          node.target, nlohmann::json(node.shape).dump(), spec_.m, spec_.n));
    }
    std::map<std::string, std::string> vars;
    bool from_matmul = false;
    for (const auto& arg : node.args) {
      if (!arg.IsRef()) continue;
      const std::string var = Operand(arg.ref);
      if (var.empty()) return false;
      vars[arg.ref] = var;
      from_matmul = from_matmul || values_[arg.ref].from_matmul;
    }
    std::string error;
    const std::string expr = TritonElementwiseExpr(node, vars, error);
    if (!error.empty()) return Error(fmt::format("unsupported_op: {} ({})", node.target, error));
    const std::string var = NextVar();
    spec_.lines.push_back(fmt::format("{} = {}  # {}", var, expr, node.target));
    spec_.ops.push_back(node.target);
    values_[node.name] = {false, -1, false, node.shape, node.dtype, var, from_matmul};
    return true;
  }

  std::string NextVar() { return fmt::format("t{}", next_var_++); }

  const core::OpGraph& graph_;
  TritonMatmulSpec spec_;
  std::map<std::string, Value> values_;
  std::string error_;
  int next_var_ = 0;
};

}  // namespace

bool IsMatmulTarget(const std::string& target) {
  static const std::set<std::string> ops = {"aten.mm.default",     "aten.addmm.default",
                                            "aten.linear.default", "aten.matmul.default",
                                            "aten.bmm.default",    "aten.baddbmm.default"};
  return ops.count(target) > 0;
}

std::optional<TritonMatmulMatch> MatchTritonMatmul(const core::OpGraph& graph) {
  const core::OpNode* mm = nullptr;
  for (const core::OpNode* call : graph.Calls()) {
    if (!IsMatmulTarget(call->target)) continue;
    if (call->target == "aten.bmm.default" || call->target == "aten.baddbmm.default") {
      return TritonMatmulMatch{
          std::nullopt, "unsupported_op: " + call->target + " (the matmul template is 2-D only)"};
    }
    if (mm != nullptr)
      return TritonMatmulMatch{std::nullopt, "unsupported_graph: more than one matmul"};
    mm = call;
  }
  if (mm == nullptr) return std::nullopt;
  return Matcher(graph).Run(*mm);
}

}  // namespace kernelevolve::operators::templates
