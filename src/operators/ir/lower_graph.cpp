#include "operators/ir/lower_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "operators/ir/lower_builder.h"
#include "operators/template/pointwise_rules.h"

namespace kernelevolve::operators::ir {

std::string ValueName(int id) { return "v" + std::to_string(id); }

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::string OutOfPlace(const std::string& target) {
  const size_t first = target.find('.');
  const size_t second = target.find('.', first + 1);
  if (first == std::string::npos || second == std::string::npos) return target;
  std::string op = target.substr(first + 1, second - first - 1);
  if (op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_') {
    return target.substr(0, first + 1) + op.substr(0, op.size() - 1) + target.substr(second);
  }
  return target;
}

// ---- Builder -------------------------------------------------------------------

int Builder::Append(Value v) {
  v.id = static_cast<int>(graph_.values.size());
  v.origin = origin_;
  graph_.values.push_back(std::move(v));
  return graph_.values.back().id;
}

int Builder::Input(const core::OpNode& node) {
  Value v;
  v.kind = ValueKind::kInput;
  v.dtype = node.dtype;
  v.shape = node.shape;
  v.abi_index = node.abi_index;
  v.input_name = node.name;
  return Append(std::move(v));
}

int Builder::Ew(const std::string& target, std::vector<IrArg> args, core::DType dtype) {
  Value v;
  v.kind = ValueKind::kElementwise;
  v.dtype = dtype;
  v.node.target = target;
  std::vector<int64_t> shape;
  for (const IrArg& a : args) {
    core::OpArg arg;
    arg.name = a.name;
    if (a.id < 0) {
      arg.value = a.value;
      v.node.args.push_back(std::move(arg));
      continue;
    }
    arg.ref = ValueName(a.id);
    v.node.args.push_back(std::move(arg));
    v.operands.push_back(a.id);
    const auto& s = At(a.id).shape;
    std::vector<int64_t> out(std::max(shape.size(), s.size()), 1);
    for (size_t k = 0; k < out.size(); ++k) {
      const int64_t x = k < shape.size() ? shape[shape.size() - 1 - k] : 1;
      const int64_t y = k < s.size() ? s[s.size() - 1 - k] : 1;
      if (x != y && x != 1 && y != 1) {
        Fail(fmt::format("unsupported_graph: shapes {} and {} do not broadcast ({})",
                         ShapeText(shape), ShapeText(s), target));
      }
      out[out.size() - 1 - k] = x == 1 ? y : x;
    }
    shape = out;
  }
  v.shape = shape;
  v.node.name = ValueName(static_cast<int>(graph_.values.size()));
  v.node.shape = shape;
  return Append(std::move(v));
}

int Builder::View(int id, std::vector<int64_t> shape) {
  if (Numel(shape) != Numel(At(id).shape)) {
    Fail(fmt::format("unsupported_graph: view of {} as {} changes the element count",
                     ShapeText(At(id).shape), ShapeText(shape)));
  }
  Value v;
  v.kind = ValueKind::kView;
  v.dtype = At(id).dtype;
  v.shape = std::move(shape);
  v.operands = {id};
  return Append(std::move(v));
}

int Builder::Iota(std::vector<int64_t> shape, int dim) {
  Value v;
  v.kind = ValueKind::kIota;
  v.shape = std::move(shape);
  v.dim = dim;
  return Append(std::move(v));
}

int Builder::Reduce(ReduceKind kind, int id, std::vector<int> dims, bool keepdim) {
  Value v;
  v.kind = ValueKind::kReduce;
  v.reduce = kind;
  v.operands = {id};
  v.shape = At(id).shape;
  for (int d : dims) v.shape[static_cast<size_t>(d)] = 1;
  v.dims = dims;
  const int r = Append(std::move(v));
  if (keepdim) return r;
  std::vector<int64_t> squeezed;
  const auto& full = At(id).shape;
  for (size_t d = 0; d < full.size(); ++d) {
    if (std::find(dims.begin(), dims.end(), static_cast<int>(d)) == dims.end()) {
      squeezed.push_back(full[d]);
    }
  }
  return View(r, squeezed);
}

int Builder::Mean(int id, const std::vector<int>& dims, bool keepdim) {
  int64_t count = 1;
  for (int d : dims) count *= At(id).shape[static_cast<size_t>(d)];
  const int sum = Reduce(ReduceKind::kSum, id, dims, keepdim);
  return Scalar("aten.div.Tensor", sum, static_cast<double>(count));
}

int Builder::Variance(int id, const std::vector<int>& dims, double correction, int* mean_out) {
  int64_t count = 1;
  for (int d : dims) count *= At(id).shape[static_cast<size_t>(d)];
  const int mean = Mean(id, dims, true);
  if (mean_out != nullptr) *mean_out = mean;
  const int dev = Binary("aten.sub.Tensor", id, mean);
  const int sq = Binary("aten.mul.Tensor", dev, dev);
  const int ss = Reduce(ReduceKind::kSum, sq, dims, true);
  const double denom = std::max(0.0, static_cast<double>(count) - correction);
  return Scalar("aten.div.Tensor", ss, denom);
}

bool NormalizeDims(const nlohmann::json& dims, int64_t rank, std::vector<int>& out) {
  out.clear();
  std::vector<int64_t> raw;
  if (dims.is_number_integer()) raw.push_back(dims.get<int64_t>());
  if (dims.is_array()) {
    for (const auto& d : dims) {
      if (!d.is_number_integer()) return false;
      raw.push_back(d.get<int64_t>());
    }
  } else if (!dims.is_null() && !dims.is_number_integer()) {
    return false;
  }
  if (raw.empty()) {
    for (int64_t d = 0; d < rank; ++d) out.push_back(static_cast<int>(d));
    return true;
  }
  const int64_t wrap = std::max<int64_t>(rank, 1);
  for (int64_t d : raw) {
    const int64_t w = d < 0 ? d + wrap : d;
    if (w < 0 || w >= wrap) return false;
    if (rank > 0) out.push_back(static_cast<int>(w));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return true;
}

// ---- Lower ---------------------------------------------------------------------

namespace {

const std::set<std::string>& ViewTargets() {
  static const std::set<std::string> kViews = {
      "aten.view.default",      "aten.reshape.default",   "aten._unsafe_view.default",
      "aten.unsqueeze.default", "aten.squeeze.dim",       "aten.squeeze.dims",
      "aten.squeeze.default",   "aten.expand.default",    "aten.flatten.using_ints",
      "aten.contiguous.default"};
  return kViews;
}

std::string OriginText(const core::OpNode& node) {
  std::vector<std::string> parts;
  for (const auto& a : node.args) {
    parts.push_back(a.name + "=" + (a.IsRef() ? a.ref : a.value.dump()));
  }
  return fmt::format("{} = {}({})", node.name, node.target, fmt::join(parts, ", "));
}

class Lowerer {
 public:
  explicit Lowerer(const core::OpGraph& graph) : graph_(graph) {}

  LowerResult Run() {
    for (const auto& node : graph_.nodes) {
      b_.SetOrigin(OriginText(node));
      if (node.kind != core::OpNodeKind::kCall) {
        if (node.dtype != core::DType::kFloat32 && node.dtype != core::DType::kInt64) {
          return Fail(fmt::format("unsupported_dtype: input '{}' is {} (the rowwise template "
                                  "handles float32, and int64 class targets)",
                                  node.name, core::DTypeName(node.dtype)));
        }
        env_[node.name] = {b_.Input(node)};
        continue;
      }
      if (!LowerCall(node)) return Fail(b_.Error());
      if (!b_.Error().empty()) return Fail(b_.Error());
    }
    Graph& g = b_.Out();
    for (const auto& name : graph_.outputs) {
      const auto it = env_.find(name);
      if (it == env_.end() || it->second.size() != 1 || it->second[0] < 0) {
        return Fail("unsupported_graph: output '" + name + "' is not a lowered tensor");
      }
      const core::OpNode* node = graph_.Find(name);
      const core::DType dt = node != nullptr ? node->dtype : core::DType::kFloat32;
      if (dt != core::DType::kFloat32 && dt != core::DType::kInt64) {
        return Fail(fmt::format("unsupported_dtype: output '{}' is {}", name, core::DTypeName(dt)));
      }
      g.outputs.push_back(it->second[0]);
      g.output_dtypes.push_back(dt);
    }
    if (g.outputs.empty()) return Fail("unsupported_graph: the graph has no output");
    return {std::move(g), ""};
  }

 private:
  LowerResult Fail(const std::string& why) { return {std::nullopt, why}; }

  /// The single lowered value of a tensor argument; -1 for None; -2 on a problem.
  int Tensor(const core::OpNode& node, const core::OpArg& arg) {
    if (!arg.IsRef()) return -1;
    const auto it = env_.find(arg.ref);
    if (it == env_.end() || it->second.size() != 1 || it->second[0] < 0) {
      b_.Fail(fmt::format("unsupported_op: {} (argument '{}' = '{}' is not a lowered tensor)",
                          node.target, arg.name, arg.ref));
      return -2;
    }
    return it->second[0];
  }

  bool LowerCall(const core::OpNode& node) {
    const std::string target = OutOfPlace(node.target);
    if (target == "getitem") {
      const core::OpArg* self = node.Arg("self");
      const core::OpArg* index = node.Arg("index");
      const auto it = self != nullptr ? env_.find(self->ref) : env_.end();
      if (it == env_.end() || index == nullptr || !index->value.is_number_integer() ||
          index->value.get<size_t>() >= it->second.size()) {
        b_.Fail("unsupported_graph: getitem '" + node.name + "' of an unknown tuple");
        return false;
      }
      env_[node.name] = {it->second[index->value.get<size_t>()]};
      return true;
    }
    if (target == "aten.empty.memory_format") {
      env_[node.name] = {-1};  // unused scratch of native_batch_norm
      return true;
    }
    std::map<std::string, int> in;
    for (const auto& a : node.args) {
      if (a.IsRef()) {
        const int id = Tensor(node, a);
        if (id == -2) return false;
        in[a.name] = id;
      }
    }
    if (ViewTargets().count(target) > 0) {
      const int self = in.count("self") > 0 ? in["self"] : -1;
      if (self < 0) {
        b_.Fail("unsupported_op: " + node.target + " (no tensor 'self')");
        return false;
      }
      // expand keeps the smaller operand: broadcasting of its users does the rest.
      env_[node.name] = {target == "aten.expand.default" ? self : b_.View(self, node.shape)};
      return true;
    }
    if (templates::FindPointwiseRule(target) != nullptr) return LowerPointwise(node, target, in);
    std::vector<int> outputs;
    if (LowerCompound(b_, node, in, outputs)) {
      env_[node.name] = outputs;
      return b_.Error().empty();
    }
    if (b_.Error().empty()) b_.Fail("unsupported_op: " + node.target);
    return false;
  }

  bool LowerPointwise(const core::OpNode& node, const std::string& target,
                      const std::map<std::string, int>& in) {
    if (node.dtype != core::DType::kFloat32 && node.dtype != core::DType::kBool) {
      b_.Fail(fmt::format("unsupported_dtype: node '{}' ({}) is {}", node.name, node.target,
                          core::DTypeName(node.dtype)));
      return false;
    }
    for (const auto& [name, id] : in) {
      if (id >= 0 && b_.At(id).dtype == core::DType::kInt64) {
        b_.Fail(fmt::format("unsupported_dtype: {} argument '{}' is int64 (the rowwise template "
                            "handles float32; int64 only as nll_loss targets)",
                            node.target, name));
        return false;
      }
    }
    std::vector<IrArg> args;
    for (const auto& a : node.args) {
      args.push_back(a.IsRef() ? T(a.name, in.at(a.name)) : C(a.name, a.value));
    }
    const int id = b_.Ew(target, args, node.dtype);
    if (b_.At(id).shape != node.shape) {
      b_.Fail(fmt::format("unsupported_graph: node '{}' lowers to shape {}, captured {}",
                          node.name, ShapeText(b_.At(id).shape), ShapeText(node.shape)));
      return false;
    }
    env_[node.name] = {id};
    return true;
  }

  const core::OpGraph& graph_;
  Builder b_;
  std::map<std::string, std::vector<int>> env_;
};

}  // namespace

bool IsLowerableTarget(const std::string& target) {
  const std::string t = OutOfPlace(target);
  return t == "getitem" || t == "aten.empty.memory_format" || ViewTargets().count(t) > 0 ||
         templates::FindPointwiseRule(t) != nullptr || IsCompoundTarget(t);
}

LowerResult Lower(const core::OpGraph& graph) { return Lowerer(graph).Run(); }

}  // namespace kernelevolve::operators::ir
