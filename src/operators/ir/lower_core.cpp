#include "operators/ir/lower_core.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "operators/ir/core_lowerer.h"
#include "operators/ir/lower_graph.h"

namespace kernelevolve::operators::ir {
namespace {

using core::DType;

/// Every rule by target.
const std::map<std::string, const LoweringRule*>& RuleIndex() {
  static const std::map<std::string, const LoweringRule*> index = [] {
    std::map<std::string, const LoweringRule*> m;
    for (const auto* table : {&ElementwiseRules(), &LayoutRules(), &ReductionRules(), &HeavyRules(), &KeptRules(), &SearchRules(), &SortRules(), &ScatterRules(), &SampleRules(), &DistanceRules()}) {
      for (const LoweringRule& r : *table) m.emplace(r.target, &r);
    }
    return m;
  }();
  return index;
}

/// float16 and bfloat16 are storage formats here: a value of either is held and
/// computed as float32, rounded to its type where eager rounds (each op's result).
bool IsHalf(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; }

/// A definition of `def`'s shape holding its elements cast to `dtype` (Compute casts
/// its body to its dtype).
int CastDef(CoreLowerer& l, int def, DType dtype) {
  const TensorDef& d = l.Def(def);
  return l.Compute(d.shape, dtype, l.Read(def, IndexVars(d.shape.size())));
}

/// def rounded to `half` and widened back to float32: eager's CPU and CUDA kernels
/// compute a float16 / bfloat16 op in float32 and round its result once
/// (at::opmath_type, aten/src/ATen/OpMathType.h), so a chain of such ops rounds after
/// every op; so does the program.
int RoundThroughHalf(CoreLowerer& l, int def, DType half) {
  const TensorDef& d = l.Def(def);
  return l.Compute(d.shape, DType::kFloat32, Cast(l.Read(def, IndexVars(d.shape.size())), half));
}

}  // namespace

// ---- shapes -------------------------------------------------------------------------

std::vector<int64_t> ContiguousStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) s[k - 1] = s[k] * shape[k];
  return s;
}

Expr FlatOffset(const std::vector<Expr>& index, const std::vector<int64_t>& shape) {
  Expr flat = Int(0);
  for (size_t k = 0; k < shape.size(); ++k) flat = IAdd(IMul(flat, shape[k]), index.at(k));
  return flat;
}

Expr FlatOffset(const std::vector<Expr>& index, const std::vector<Expr>& extents) {
  Expr flat = Int(0);
  for (size_t k = 0; k < extents.size(); ++k) flat = IAdd(IMul(flat, extents[k]), index.at(k));
  return flat;
}

namespace {
std::vector<Expr> ConstantsOr(const std::vector<Expr>& symbolic, const std::vector<int64_t>& values) {
  if (!symbolic.empty()) return symbolic;
  std::vector<Expr> out;
  for (int64_t v : values) out.push_back(Int(v));
  return out;
}
}  // namespace

std::vector<Expr> Extents(const TensorDef& def) { return ConstantsOr(def.symbolic_shape, def.shape); }
std::vector<Expr> ReduceExtents(const TensorDef& def) {
  return ConstantsOr(def.symbolic_reduce_extents, def.reduce_extents);
}

std::string SizesText(const TensorDef& def) {
  if (def.symbolic_shape.empty()) return ShapeText(def.shape);
  std::string out = "[";
  for (size_t k = 0; k < def.symbolic_shape.size(); ++k) {
    out += (k ? ", " : "") + ExprText(def.symbolic_shape[k]);
  }
  return out + "]";
}

std::vector<Expr> Unflatten(const Expr& flat, const std::vector<int64_t>& shape) {
  std::vector<Expr> out(shape.size());
  const auto strides = ContiguousStrides(shape);
  for (size_t k = 0; k < shape.size(); ++k) {
    Expr q = strides[k] == 1 ? flat : IFloorDiv(flat, strides[k]);
    out[k] = k == 0 ? q : IRem(q, shape[k]);
    if (shape[k] == 1) out[k] = Int(0);
  }
  return out;
}

std::vector<Expr> IndexVars(size_t rank, int first) {
  std::vector<Expr> v;
  for (size_t k = 0; k < rank; ++k) v.push_back(Var(first + static_cast<int>(k)));
  return v;
}

// ---- CoreLowerer --------------------------------------------------------------------

int CoreLowerer::Append(TensorDef def) {
  def.id = static_cast<int>(program_.defs.size());
  def.origin = origin_;
  def.backend = backend_;
  program_.defs.push_back(std::move(def));
  return program_.defs.back().id;
}

int CoreLowerer::AddInput(const core::OpNode& node) {
  TensorDef d;
  d.kind = DefKind::kInput;
  d.dtype = node.dtype;
  d.shape = node.shape;
  d.abi_index = node.abi_index;
  return Append(std::move(d));
}

int CoreLowerer::Compute(std::vector<int64_t> shape, DType dtype, Expr body) {
  TensorDef d;
  d.kind = DefKind::kCompute;
  d.dtype = dtype;
  d.shape = std::move(shape);
  d.body = Cast(std::move(body), dtype);
  return Append(std::move(d));
}

int CoreLowerer::Reduce(std::vector<int64_t> shape, DType dtype, std::vector<int64_t> extents,
                        ReduceOp op, Expr body) {
  TensorDef d;
  d.kind = DefKind::kReduce;
  d.dtype = dtype;
  d.shape = std::move(shape);
  d.reduce_extents = std::move(extents);
  d.reduce = op;
  d.body = std::move(body);
  return Append(std::move(d));
}

int CoreLowerer::Scan(std::vector<int64_t> shape, DType dtype, int dim, ScanOp op, Expr body) {
  TensorDef d;
  d.kind = DefKind::kScan;
  d.dtype = dtype;
  d.shape = std::move(shape);
  d.scan_dim = dim;
  d.scan = op;
  d.body = Cast(std::move(body), dtype);
  return Append(std::move(d));
}

Expr CoreLowerer::Read(int def, std::vector<Expr> index, Expr mask) const {
  const TensorDef& d = Def(def);
  // Size-1 dims always read index 0 (also keeps index arithmetic small).
  for (size_t k = 0; k < d.shape.size() && k < index.size(); ++k) {
    if (d.shape[k] == 1) index[k] = Int(0);
  }
  return Load(def, d.dtype, std::move(index), std::move(mask));
}

Expr CoreLowerer::ReadBroadcast(int def, const std::vector<int64_t>& out_shape) const {
  const auto& s = Def(def).shape;
  std::vector<Expr> index(s.size());
  const int lead = static_cast<int>(out_shape.size()) - static_cast<int>(s.size());
  for (size_t k = 0; k < s.size(); ++k) {
    const int ok = lead + static_cast<int>(k);
    index[k] = (s[k] == 1 || ok < 0) ? Int(0) : Var(ok);
  }
  return Read(def, std::move(index));
}

Expr CoreLowerer::Operand(const core::OpNode& node, const std::string& name,
                          const std::vector<int64_t>& out_shape, DType dtype) {
  if (IsTensor(node, name)) {
    const int t = Tensor(node, name);
    if (t < 0) return Constant(0, dtype);
    return Cast(ReadBroadcast(t, out_shape), dtype);
  }
  // An integer scalar of an integer op stays exact: through a double, int64 constants
  // above 2^53 (hash multipliers such as 0x7F51AFD7ED558CCD) would lose their low bits.
  const nlohmann::json v = Value(node, name);
  if (v.is_number_integer() && !core::IsFloatingPoint(dtype) && dtype != DType::kBool) {
    return Int(v.get<int64_t>(), dtype);
  }
  return Constant(Number(node, name), dtype);
}

bool CoreLowerer::IsTensor(const core::OpNode& node, const std::string& name) {
  const core::OpArg* a = node.Arg(name);
  return a != nullptr && a->IsRef();
}

nlohmann::json CoreLowerer::Value(const core::OpNode& node, const std::string& name) {
  const core::OpArg* a = node.Arg(name);
  if (a == nullptr || a->IsRef()) return nullptr;
  return a->value;
}

int CoreLowerer::Tensor(const core::OpNode& node, const std::string& name) {
  const core::OpArg* a = node.Arg(name);
  if (a == nullptr || !a->IsRef()) {
    Unsupported(node, "argument '" + name + "' is not a tensor");
    return -1;
  }
  const std::vector<int>* v = Bound(a->ref);
  if (v == nullptr || v->size() != 1) {
    Fail(fmt::format("unsupported_graph: node {} reads '{}', which is not one tensor", node.name, a->ref));
    return -1;
  }
  return v->front();
}

std::vector<int> CoreLowerer::TensorList(const core::OpNode& node, const std::string& name) {
  std::vector<int> out;
  const nlohmann::json v = Value(node, name);
  if (!v.is_array()) {
    Unsupported(node, "argument '" + name + "' is not a list of tensors");
    return out;
  }
  for (const auto& item : v) {
    if (item.is_null()) {
      out.push_back(-1);
      continue;
    }
    const std::vector<int>* b =
        item.is_object() && item.contains("ref") ? Bound(item["ref"].get<std::string>()) : nullptr;
    if (b == nullptr || b->size() != 1) {
      Unsupported(node, "argument '" + name + "' holds something other than tensors");
      return {};
    }
    out.push_back(b->front());
  }
  return out;
}

double CoreLowerer::Number(const core::OpNode& node, const std::string& name, double fallback) {
  const nlohmann::json v = Value(node, name);
  if (v.is_null()) return fallback;
  if (v.is_number()) return v.get<double>();
  if (v.is_boolean()) return v.get<bool>() ? 1 : 0;
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
    if (s == "nan") return NAN;
  }
  Unsupported(node, "argument '" + name + "' is not a number");
  return fallback;
}

int64_t CoreLowerer::IntArg(const core::OpNode& node, const std::string& name, int64_t fallback) {
  const nlohmann::json v = Value(node, name);
  if (v.is_null()) return fallback;
  if (v.is_number_integer() || v.is_boolean()) return v.is_boolean() ? v.get<bool>() : v.get<int64_t>();
  Unsupported(node, "argument '" + name + "' is not an integer");
  return fallback;
}

std::vector<int64_t> CoreLowerer::IntList(const core::OpNode& node, const std::string& name) {
  const nlohmann::json v = Value(node, name);
  std::vector<int64_t> out;
  if (v.is_null()) return out;
  if (v.is_number_integer()) return {v.get<int64_t>()};
  if (!v.is_array()) {
    Unsupported(node, "argument '" + name + "' is not a list of integers");
    return out;
  }
  for (const auto& x : v) {
    if (!x.is_number_integer()) {
      Unsupported(node, "argument '" + name + "' is not a list of integers");
      return {};
    }
    out.push_back(x.get<int64_t>());
  }
  return out;
}

int CoreLowerer::NormDim(int64_t dim, size_t rank) {
  const int64_t r = std::max<int64_t>(static_cast<int64_t>(rank), 1);
  if (dim < -r || dim >= r) {
    Fail(fmt::format("unsupported_graph: dim {} out of range for rank {}", dim, rank));
    return 0;
  }
  return static_cast<int>(dim < 0 ? dim + r : dim);
}

void CoreLowerer::Unsupported(const core::OpNode& node, const std::string& why) {
  Fail(fmt::format("unsupported_op: {} ({}) (node {})", node.target, why, node.name));
}

const std::vector<int>* CoreLowerer::Bound(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

CoreLowerer::CoreLowerer(TensorProgram& program, const core::OpGraph& graph) : program_(program) {
  // Backwards from the outputs, so that a getitem nothing reads (make_fx records one
  // per result) does not count.
  for (const std::string& out : graph.outputs) reads_[out].insert(-1);
  for (auto node = graph.nodes.rbegin(); node != graph.nodes.rend(); ++node) {
    if (reads_.count(node->name) == 0) continue;
    const nlohmann::json k = Value(*node, "index");
    for (const core::OpArg& arg : node->args) {
      if (arg.IsRef()) {
        const bool item = node->target == "getitem" && arg.name == "self" && k.is_number_integer();
        reads_[arg.ref].insert(item ? k.get<int64_t>() : -1);
      } else if (arg.value.is_array()) {
        for (const auto& v : arg.value) {
          if (v.is_object() && v.contains("ref") && v["ref"].is_string()) reads_[v["ref"].get<std::string>()].insert(-1);
        }
      }
    }
  }
}

bool CoreLowerer::ResultRead(const core::OpNode& node, int64_t k) const {
  auto it = reads_.find(node.name);
  return it != reads_.end() && (it->second.count(-1) > 0 || it->second.count(k) > 0);
}

// ---- driver -------------------------------------------------------------------------

CoreLowerResult LowerCore(const core::OpGraph& graph) {
  TensorProgram program;
  CoreLowerer l(program, graph);
  const auto& index = RuleIndex();
  for (const core::OpNode& node : graph.nodes) {
    if (node.kind != core::OpNodeKind::kCall) {
      l.SetOrigin(node.name);
      const int input = l.AddInput(node);
      l.Bind(node.name, {IsHalf(node.dtype) ? CastDef(l, input, DType::kFloat32) : input});
      ++program.num_inputs;
      continue;
    }
    // A call no output depends on (make_fx records a getitem per result, and what
    // follows an unused one) is not lowered: a rule may have skipped that result.
    if (!l.Live(node)) continue;
    l.SetOrigin(node.name + " (" + node.target + ")", node.backend);
    if (node.target == "getitem") {
      const std::vector<int>* tuple = nullptr;
      if (const core::OpArg* a = node.Arg("self"); a != nullptr && a->IsRef()) tuple = l.Bound(a->ref);
      const int64_t k = CoreLowerer::Value(node, "index").is_number_integer()
                            ? CoreLowerer::Value(node, "index").get<int64_t>()
                            : -1;
      if (tuple == nullptr || k < 0 || k >= static_cast<int64_t>(tuple->size()) || (*tuple)[k] < 0) {
        return {std::nullopt, "unsupported_graph: getitem '" + node.name + "' of an unknown result"};
      }
      int item = (*tuple)[static_cast<size_t>(k)];
      if (IsHalf(node.dtype) && l.Def(item).dtype == DType::kFloat32) item = RoundThroughHalf(l, item, node.dtype);
      l.Bind(node.name, {item});
      continue;
    }
    // An in-place op lowers as its out-of-place twin unless it has a rule of its own
    // (aten.transpose_.default, whose twin is transpose.int).
    auto it = index.find(node.target);
    if (it == index.end()) it = index.find(OutOfPlace(node.target));
    if (it == index.end()) {
      return {std::nullopt, fmt::format("unsupported_op: {} (node {})", node.target, node.name)};
    }
    // A half-precision node is lowered as its float32 twin, then rounded.
    core::OpNode work = node;
    if (IsHalf(work.dtype)) work.dtype = DType::kFloat32;
    std::vector<int> outs = it->second->fn(l, work);
    if (l.Failed()) return {std::nullopt, l.Error()};
    if (outs.empty()) {
      return {std::nullopt, fmt::format("unsupported_op: {} (node {}: no result)", node.target, node.name)};
    }
    // Single results take the captured shape and dtype as the check of the rule.
    if (outs.size() == 1 && outs[0] >= 0) {
      const TensorDef& d = l.Def(outs[0]);
      if (d.shape != node.shape) {
        return {std::nullopt, fmt::format("unsupported_graph: lowering of {} (node {}) gives shape {}, "
                                          "the capture says {}", node.target, node.name,
                                          ShapeText(d.shape), ShapeText(node.shape))};
      }
      if (d.dtype != work.dtype) outs[0] = CastDef(l, outs[0], work.dtype);
      if (IsHalf(node.dtype)) outs[0] = RoundThroughHalf(l, outs[0], node.dtype);
    }
    l.Bind(node.name, outs);
  }
  for (const std::string& name : graph.outputs) {
    const std::vector<int>* v = l.Bound(name);
    if (v == nullptr || v->size() != 1 || v->front() < 0) {
      return {std::nullopt, "unsupported_graph: output '" + name + "' is not one tensor"};
    }
    int out = v->front();
    // A half-precision output is stored in its type (its value is already rounded).
    if (const core::OpNode* n = graph.Find(name); n != nullptr && IsHalf(n->dtype)) {
      l.SetOrigin(name + " (stored as " + std::string(core::DTypeName(n->dtype)) + ")");
      out = CastDef(l, out, n->dtype);
    }
    program.outputs.push_back(out);
  }
  if (program.outputs.empty()) return {std::nullopt, "unsupported_graph: the graph has no outputs"};
  return {std::move(program), ""};
}

std::vector<LoweringRow> CoreLoweringTable() {
  std::vector<LoweringRow> rows;
  for (const auto& [target, rule] : RuleIndex()) rows.push_back({target, rule->how});
  return rows;
}

}  // namespace kernelevolve::operators::ir
