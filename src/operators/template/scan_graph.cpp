#include "operators/template/scan_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "operators/template/pointwise_subgraph.h"

namespace kernelevolve::operators::templates {
namespace {

constexpr const char* kFlip = "aten.flip.default";

ScanMatch Unsupported(std::string why) { return {std::nullopt, std::move(why)}; }

std::string ShapeText(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

bool IsInput(const core::OpNode& node) { return node.kind != core::OpNodeKind::kCall; }

/// `dim` wrapped into [0, rank) (rank 0 behaves as rank 1), or nullopt when out of range.
std::optional<int64_t> WrapDim(int64_t dim, int64_t rank) {
  const int64_t r = std::max<int64_t>(rank, 1);
  if (dim < -r || dim >= r) return std::nullopt;
  return dim < 0 ? dim + r : dim;
}

/// Checks the scan call's arguments and fills op, target, dim and the layout.
std::optional<std::string> ReadScanCall(const core::OpGraph& graph, const core::OpNode& call,
                                        ScanSpec& spec) {
  const std::string& t = call.target;
  spec.op = t == "aten.cumprod.default" ? ScanOp::kProd : ScanOp::kSum;
  spec.target = t;
  spec.scan_node = call.name;
  const core::OpArg* self = call.Arg("self");
  const core::OpNode* operand = (self && self->IsRef()) ? graph.Find(self->ref) : nullptr;
  if (operand == nullptr) return "unsupported_op: " + t + " (its 'self' is not a tensor node)";
  if (operand->dtype != core::DType::kFloat32 || call.dtype != core::DType::kFloat32) {
    return fmt::format(
        "unsupported_dtype: {} on {} -> {} (the scan template handles float32; a bool or "
        "integer operand gives an int64 scan)",
        t, core::DTypeName(operand->dtype), core::DTypeName(call.dtype));
  }
  const core::OpArg* dtype = call.Arg("dtype");
  if (dtype && (dtype->IsRef() || !(dtype->value.is_null() || dtype->value == "float32"))) {
    return "unsupported_op: " + t + " (dtype=" + (dtype->IsRef() ? dtype->ref : dtype->value.dump()) +
           "; the scan template accumulates float32 in float or double itself)";
  }
  const core::OpArg* dim_arg = call.Arg("dim");
  if (dim_arg == nullptr || dim_arg->IsRef() || !dim_arg->value.is_number_integer()) {
    return "unsupported_op: " + t + " (argument 'dim' is not an integer)";
  }
  spec.shape = call.shape;
  spec.rank = static_cast<int64_t>(call.shape.size());
  const auto dim = WrapDim(dim_arg->value.get<int64_t>(), spec.rank);
  if (!dim) return fmt::format("unsupported_op: {} (dim={} out of range)", t, dim_arg->value.dump());
  spec.dim = *dim;
  spec.n = spec.rank == 0 ? 1 : spec.shape[spec.dim];
  for (int64_t d = 0; d < spec.rank; ++d) {
    if (d < spec.dim) spec.outer *= spec.shape[d];
    if (d > spec.dim) spec.inner *= spec.shape[d];
  }
  return std::nullopt;
}

/// Collects the ABI inputs (float32 or bool, the scan's shape, numbered 0..k-1).
std::optional<std::string> ReadInputs(const core::OpGraph& graph, ScanSpec& spec) {
  std::vector<const core::OpNode*> inputs;
  for (const auto& node : graph.nodes) {
    if (!IsInput(node)) continue;
    if (node.dtype != core::DType::kFloat32 && node.dtype != core::DType::kBool) {
      return fmt::format("unsupported_dtype: input '{}' is {} (the scan template reads float32 "
                         "and bool inputs)",
                         node.name, core::DTypeName(node.dtype));
    }
    if (node.shape != spec.shape) {
      return fmt::format("unsupported_graph: input '{}' has shape {} but the scan has {} "
                         "(broadcasting is not templated)",
                         node.name, ShapeText(node.shape), ShapeText(spec.shape));
    }
    inputs.push_back(&node);
  }
  std::sort(inputs.begin(), inputs.end(),
            [](const core::OpNode* a, const core::OpNode* b) { return a->abi_index < b->abi_index; });
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i]->abi_index != static_cast<int>(i)) {
      return fmt::format("unsupported_graph: input '{}' has abi_index {}, expected {}",
                         inputs[i]->name, inputs[i]->abi_index, i);
    }
    spec.inputs.push_back({inputs[i]->name, inputs[i]->dtype == core::DType::kBool});
  }
  if (inputs.empty()) return std::string("unsupported_graph: the graph has no tensor input");
  return std::nullopt;
}

/// Parity of flips along the scanned dim for every node (0 = as stored, 1 =
/// reversed), and the flips as aliases of their operands. Fails on a flip along
/// another dim and on an op combining values of different parity.
std::optional<std::string> FlipParities(const core::OpGraph& graph, const ScanSpec& spec,
                                        std::map<std::string, int>& parity,
                                        std::map<std::string, std::string>& aliases) {
  for (const auto& node : graph.nodes) {
    int p = -1;
    std::string first_ref;
    for (const auto& arg : node.args) {
      if (!arg.IsRef() || parity.count(arg.ref) == 0) continue;
      if (p >= 0 && parity[arg.ref] != p) {
        return fmt::format("unsupported_graph: {} '{}' combines '{}' and '{}', which are "
                           "flipped differently along dim {} (only a flip, scan, flip back "
                           "is templated)",
                           node.target, node.name, first_ref, arg.ref, spec.dim);
      }
      p = parity[arg.ref];
      if (first_ref.empty()) first_ref = arg.ref;
    }
    if (node.target != kFlip) {
      parity[node.name] = std::max(p, 0);
      continue;
    }
    const core::OpArg* dims = node.Arg("dims");
    std::vector<int64_t> wrapped;
    if (dims && !dims->IsRef() && dims->value.is_array()) {
      for (const auto& d : dims->value) {
        const auto w = d.is_number_integer() ? WrapDim(d.get<int64_t>(), spec.rank) : std::nullopt;
        if (w) wrapped.push_back(*w);
      }
    }
    if (!dims || dims->IsRef() || !dims->value.is_array() || wrapped.size() > 1 ||
        wrapped.size() != dims->value.size() || (wrapped.size() == 1 && wrapped[0] != spec.dim)) {
      return fmt::format("unsupported_op: {} (dims={} is not the scanned dim {})", kFlip,
                         dims ? dims->value.dump() : "missing", spec.dim);
    }
    aliases[node.name] = first_ref;
    parity[node.name] = std::max(p, 0) ^ static_cast<int>(wrapped.size());
  }
  return std::nullopt;
}

}  // namespace

bool IsScanFamilyTarget(const std::string& target) {
  return target == "aten.cumsum.default" || target == "aten.cumprod.default" ||
         target == "aten.cummax.default" || target == "aten.cummin.default" ||
         target == "aten.logcumsumexp.default";
}

ScanMatch MatchScan(const core::OpGraph& graph) {
  const core::OpNode* scan = nullptr;
  for (const core::OpNode* call : graph.Calls()) {
    if (!IsScanFamilyTarget(call->target)) continue;
    if (call->target != "aten.cumsum.default" && call->target != "aten.cumprod.default") {
      return Unsupported("unsupported_op: " + call->target +
                         " (the scan template handles cumsum and cumprod)");
    }
    if (scan != nullptr) {
      return Unsupported("unsupported_graph: two scans ('" + scan->name + "', '" + call->name +
                         "'); the scan template fuses exactly one");
    }
    scan = call;
  }
  if (scan == nullptr) return Unsupported("unsupported_graph: no cumsum or cumprod call");
  ScanSpec spec;
  if (auto why = ReadScanCall(graph, *scan, spec)) return Unsupported(*why);
  if (graph.outputs.size() != 1) {
    return Unsupported(fmt::format(
        "unsupported_graph: {} outputs (the scan template writes exactly one)", graph.outputs.size()));
  }
  const core::OpNode* out = graph.Find(graph.outputs[0]);
  if (out == nullptr || out->dtype != core::DType::kFloat32 || out->shape != spec.shape) {
    return Unsupported("unsupported_graph: the output '" + graph.outputs[0] +
                       "' must be a float32 node of the scan's shape " + ShapeText(spec.shape));
  }
  if (auto why = ReadInputs(graph, spec)) return Unsupported(*why);
  std::map<std::string, int> parity;
  std::map<std::string, std::string> aliases;
  if (auto why = FlipParities(graph, spec, parity, aliases)) return Unsupported(*why);
  if (parity[out->name] != 0) {
    return Unsupported(fmt::format("unsupported_graph: the output '{}' is a flip along dim {} "
                                   "that is not flipped back",
                                   out->name, spec.dim));
  }
  spec.reverse = parity[scan->name] != 0;

  SubgraphRequest pro;
  for (const auto& in : spec.inputs) pro.leaves.push_back({in.node, in.is_bool});
  pro.result = scan->Arg("self")->ref;
  pro.aliases = aliases;
  pro.shape = spec.shape;
  SubgraphRequest epi = pro;
  epi.leaves.insert(epi.leaves.begin(), SubgraphLeaf{scan->name, false});
  epi.result = out->name;
  const MathFlavor flavors[] = {MathFlavor::kLibm, MathFlavor::kPrelude};
  for (const MathFlavor flavor : flavors) {
    PointwiseBuild p = BuildSubgraphExpr(graph, flavor, pro);
    if (!p.expr) return Unsupported(p.unsupported);
    PointwiseBuild e = BuildSubgraphExpr(graph, flavor, epi);
    if (!e.expr) return Unsupported(e.unsupported);
    const bool libm = flavor == MathFlavor::kLibm;
    (libm ? spec.prologue_libm : spec.prologue_prelude) = std::move(*p.expr);
    (libm ? spec.epilogue_libm : spec.epilogue_prelude) = std::move(*e.expr);
  }
  std::set<std::string> after_scan = {scan->name};  // nodes whose value reads the scan
  for (const auto& node : graph.nodes) {
    for (const auto& arg : node.args) {
      if (arg.IsRef() && after_scan.count(arg.ref) > 0) after_scan.insert(node.name);
    }
  }
  if (after_scan.count(out->name) == 0) {
    return Unsupported("unsupported_graph: the output '" + out->name + "' does not use the scan '" +
                       scan->name + "'");
  }
  return {std::move(spec), ""};
}

}  // namespace kernelevolve::operators::templates
