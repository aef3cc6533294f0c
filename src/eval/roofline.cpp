#include "eval/roofline.h"

#include <fmt/format.h>

#include <set>

#include "eval/result_json.h"

namespace kernelevolve::eval {
namespace {

/// "aten.relu.default" -> "relu"; a target without the "aten." prefix is kept whole.
std::string OpName(const std::string& target) {
  std::string name = target;
  if (name.rfind("aten.", 0) == 0) name = name.substr(5);
  return name.substr(0, name.find('.'));
}

const std::set<std::string>& FreeOps() {
  static const std::set<std::string> ops = {
      "alias",   "clone",     "detach",  "view",     "reshape",    "_unsafe_view", "expand",
      "permute", "transpose", "t",       "contiguous", "unsqueeze", "squeeze",     "slice",
      "select",  "_to_copy",  "copy",    "copy_",    "lift_fresh_copy", "empty_like", "zeros_like",
      "getitem", "scalar_tensor"};
  return ops;
}

const std::set<std::string>& ElementwiseOps() {
  static const std::set<std::string> ops = {
      "abs",       "add",        "celu",     "clamp",     "clamp_max", "clamp_min",  "div",
      "elu",       "eq",         "erf",      "exp",       "expm1",     "ge",         "gelu",
      "gt",        "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "le",        "leaky_relu",
      "log",       "log1p",      "lt",       "maximum",   "minimum",   "mish",       "mul",
      "ne",        "neg",        "pow",      "reciprocal", "relu",     "rsqrt",      "rsub",
      "sigmoid",   "silu",       "softplus", "softshrink", "sqrt",     "square",     "sub",
      "tanh",      "threshold",  "where",    "sign",      "sin",       "cos",        "floor",
      "ceil",      "round",      "logical_not", "bitwise_not", "selu",  "softsign",   "exp2",
      "log2",      "atan",       "asin",     "acos",      "sinh",      "cosh",       "trunc"};
  return ops;
}

const std::set<std::string>& ReductionOps() {
  static const std::set<std::string> ops = {"sum",    "mean", "amax",   "amin",   "max", "min",
                                            "prod",   "argmax", "argmin", "norm", "linalg_vector_norm",
                                            "var",    "std",  "logsumexp", "any", "all"};
  return ops;
}

const std::set<std::string>& SoftmaxOps() {
  static const std::set<std::string> ops = {"_softmax", "softmax", "_log_softmax", "log_softmax"};
  return ops;
}

const std::set<std::string>& MatmulOps() {
  static const std::set<std::string> ops = {"mm", "bmm", "matmul", "addmm", "baddbmm", "linear",
                                            "mv", "addmv", "dot"};
  return ops;
}

/// Windowed ops: one FLOP per window element per output element.
const std::set<std::string>& PoolingOps() {
  static const std::set<std::string> ops = {"max_pool1d_with_indices", "max_pool2d_with_indices",
                                            "max_pool3d_with_indices", "avg_pool1d", "avg_pool2d",
                                            "avg_pool3d", "max_pool2d", "max_pool1d", "max_pool3d"};
  return ops;
}

double Elements(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

/// The first argument that references another node, or nullptr.
const core::OpNode* FirstInput(const core::OpGraph& graph, const core::OpNode& node) {
  for (const auto& arg : node.args) {
    if (arg.IsRef()) return graph.Find(arg.ref);
  }
  return nullptr;
}

/// The matmul's first operand: for addmm / baddbmm the second reference (the first is
/// the bias), otherwise the first.
const core::OpNode* MatmulLeft(const core::OpGraph& graph, const core::OpNode& node,
                               const std::string& name) {
  int wanted = (name == "addmm" || name == "baddbmm" || name == "addmv") ? 1 : 0;
  for (const auto& arg : node.args) {
    if (!arg.IsRef()) continue;
    if (wanted-- == 0) return graph.Find(arg.ref);
  }
  return nullptr;
}

/// The node a named argument references, or nullptr.
const core::OpNode* ArgNode(const core::OpGraph& graph, const core::OpNode& node, const std::string& name) {
  const core::OpArg* a = node.Arg(name);
  return a != nullptr && a->IsRef() ? graph.Find(a->ref) : nullptr;
}

/// Product of an int list argument (a single int counts as itself), 1 when absent.
double ListProduct(const core::OpNode& node, const std::string& name) {
  const core::OpArg* a = node.Arg(name);
  if (a == nullptr || a->IsRef()) return 1;
  if (a->value.is_number_integer()) return static_cast<double>(a->value.get<int64_t>());
  double p = 1;
  if (a->value.is_array()) {
    for (const auto& v : a->value) p *= v.is_number_integer() ? static_cast<double>(v.get<int64_t>()) : 1.0;
  }
  return p;
}

/// FLOPs of the heavy ops that are not matrix products, or -1 for another op:
///  - convolution: 2 x output elements x (input channels / groups) x window
///    (weight [Cout, Cin / groups, k...]); transposed: 2 x input elements x
///    (Cout / groups) x window (weight [Cin, Cout / groups, k...]);
///  - attention (aten._scaled_dot_product_flash_attention_for_cpu): 4 B H L S E (two
///    products), half of it when causal;
///  - pooling: output elements x window.
double HeavyFlops(const core::OpGraph& graph, const core::OpNode& node, const std::string& name) {
  if (name == "convolution") {
    const core::OpNode* weight = ArgNode(graph, node, "weight");
    const core::OpNode* input = ArgNode(graph, node, "input");
    if (weight == nullptr || weight->shape.size() < 2) return -1;
    double per = 1;
    for (size_t d = 1; d < weight->shape.size(); ++d) per *= static_cast<double>(weight->shape[d]);
    const core::OpArg* transposed = node.Arg("transposed");
    const bool t = transposed != nullptr && transposed->value.is_boolean() && transposed->value.get<bool>();
    if (t && input != nullptr) return 2.0 * Elements(input->shape) * per;
    return 2.0 * Elements(node.shape) * per;
  }
  if (name == "_scaled_dot_product_flash_attention_for_cpu") {
    const core::OpNode* q = ArgNode(graph, node, "query");
    const core::OpNode* k = ArgNode(graph, node, "key");
    if (q == nullptr || k == nullptr || q->shape.size() != 4 || k->shape.size() != 4) return -1;
    const core::OpArg* causal = node.Arg("is_causal");
    const bool c = causal != nullptr && causal->value.is_boolean() && causal->value.get<bool>();
    return (c ? 2.0 : 4.0) * Elements(q->shape) * static_cast<double>(k->shape[2]);
  }
  if (PoolingOps().count(name) > 0) {
    // The first result's shape is the node's (the indices have the same one).
    return Elements(node.shape) * ListProduct(node, "kernel_size");
  }
  return -1;
}

}  // namespace

int64_t CompulsoryBytes(const core::Problem& problem) {
  int64_t bytes = 0;
  for (const auto& t : problem.inputs) bytes += t.NumBytes();
  for (const auto& t : problem.outputs) bytes += t.NumBytes();
  return bytes;
}

double EstimateFlops(const core::OpGraph& graph, std::vector<std::string>* assumed_ops) {
  double flops = 0;
  for (const core::OpNode* node : graph.Calls()) {
    const std::string name = OpName(node->target);
    const double out_elements = Elements(node->shape);
    if (FreeOps().count(name) > 0) continue;
    if (const double heavy = HeavyFlops(graph, *node, name); heavy >= 0) {
      flops += heavy;
    } else if (ElementwiseOps().count(name) > 0) {
      flops += out_elements;
    } else if (ReductionOps().count(name) > 0 || SoftmaxOps().count(name) > 0) {
      const core::OpNode* input = FirstInput(graph, *node);
      const double in_elements = input != nullptr ? Elements(input->shape) : out_elements;
      flops += (SoftmaxOps().count(name) > 0 ? 5.0 : 1.0) * in_elements;
    } else if (MatmulOps().count(name) > 0) {
      const core::OpNode* left = MatmulLeft(graph, *node, name);
      const double k = left != nullptr && !left->shape.empty() ? static_cast<double>(left->shape.back()) : 1.0;
      flops += 2.0 * out_elements * k;
    } else {
      flops += out_elements;
      if (assumed_ops != nullptr) assumed_ops->push_back("aten." + name);
    }
  }
  return flops;
}

WorkEstimate EstimateWork(const core::Problem& problem) {
  WorkEstimate work;
  work.bytes = CompulsoryBytes(problem);
  work.flops = EstimateFlops(problem.graph, &work.assumed_ops);
  return work;
}

double MachineBalance(const MachinePeaks& peaks) {
  if (peaks.copy_bandwidth_gbps <= 0 || peaks.peak_gflops <= 0) return 0;
  return peaks.peak_gflops / peaks.copy_bandwidth_gbps;
}

core::RooflineFigures ComputeRoofline(const WorkEstimate& work, double seconds_per_call,
                                      const MachinePeaks& peaks) {
  core::RooflineFigures r;
  r.bytes_per_call = static_cast<double>(work.bytes);
  r.flops_per_call = work.flops;
  r.arithmetic_intensity = work.bytes > 0 ? work.flops / static_cast<double>(work.bytes) : 0;
  if (seconds_per_call <= 0 || work.bytes <= 0) return r;
  r.achieved_gbps = r.bytes_per_call / seconds_per_call / 1e9;
  r.achieved_gflops = r.flops_per_call / seconds_per_call / 1e9;
  if (peaks.copy_bandwidth_gbps <= 0) return r;
  const double balance = peaks.peak_gflops > 0 ? MachineBalance(peaks) : kFallbackBalance;
  if (r.arithmetic_intensity < balance) {
    r.bound = "memory";
    r.fraction = r.achieved_gbps / peaks.copy_bandwidth_gbps;
  } else {
    r.bound = "compute";
    r.fraction = peaks.peak_gflops > 0 ? r.achieved_gflops / peaks.peak_gflops : 0;
  }
  return r;
}

nlohmann::json RooflineToJson(const core::RooflineFigures& r) {
  return {{"bytes_per_call", DoubleToJson(r.bytes_per_call)},
          {"flops_per_call", DoubleToJson(r.flops_per_call)},
          {"arithmetic_intensity", DoubleToJson(r.arithmetic_intensity)},
          {"achieved_gbps", DoubleToJson(r.achieved_gbps)},
          {"achieved_gflops", DoubleToJson(r.achieved_gflops)},
          {"bound", r.bound},
          {"fraction", DoubleToJson(r.fraction)}};
}

std::string RooflineShort(const core::RooflineFigures& r) {
  if (r.bound == "memory") return fmt::format("{:.0f}% of copy bw", 100 * r.fraction);
  if (r.bound == "compute" && r.fraction > 0) return fmt::format("{:.0f}% of peak FLOP/s", 100 * r.fraction);
  if (r.bound == "compute") return "compute-bound";
  return "-";
}

}  // namespace kernelevolve::eval
