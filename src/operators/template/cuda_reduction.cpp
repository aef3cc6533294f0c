#include "operators/template/cuda_reduction.h"

#include <fmt/format.h>

#include <algorithm>

#include "operators/ir/lower_graph.h"
#include "operators/template/cuda_common.h"
#include "operators/template/cuda_pointwise.h"
#include "operators/template/reduce_spelling.h"
#include "operators/template/rowwise_emit.h"

namespace kernelevolve::operators::templates {
namespace {

using ir::Level;
using ir::ReduceKind;
using ir::ValueKind;

struct Settings {
  std::string mode;       // block | warp | thread
  int block = 256;
  bool acc_double = false;
  bool fast_math = false;
  bool online = false;    // softmax only
};

// Warp shuffles, then (more than one warp per row) one value per warp through shared
// memory; every thread of the row ends with the result.
constexpr const char* kReduceHelpers = R"CU(// ---- row reductions ----------------------------------------------------------
struct KeSum { template <class T> __device__ T operator()(T a, T b) const { return a + b; } };
struct KeProd { template <class T> __device__ T operator()(T a, T b) const { return a * b; } };
struct KeMax { template <class T> __device__ T operator()(T a, T b) const { return b > a ? b : a; } };
struct KeMin { template <class T> __device__ T operator()(T a, T b) const { return b < a ? b : a; } };

// Combines `v` over the NT threads of a row (NT = 1, 32 or the block size).
template <int NT, class T, class Op>
__device__ __forceinline__ T ke_row_reduce(T v, Op op) {
  if constexpr (NT > 1) {
#pragma unroll
    for (int off = 16; off > 0; off >>= 1) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
  }
  if constexpr (NT > 32) {
    __shared__ T smem[NT / 32];
    __syncthreads();  // readers of the previous reduction are done
    if (threadIdx.x % 32 == 0) smem[threadIdx.x / 32] = v;
    __syncthreads();
    v = smem[0];
#pragma unroll
    for (int w = 1; w < NT / 32; ++w) v = op(v, smem[w]);
  }
  return v;
}
)CU";

// Online softmax state (m: running max, s: sum of exp(x - m)) merged across a row.
constexpr const char* kOnlineHelpers = R"CU(
__device__ __forceinline__ void ke_online_combine(float& m, float& s, float m2, float s2) {
  const float top = m2 > m ? m2 : m;
  if (top == -INFINITY) return;  // both empty
  s = (m == -INFINITY ? 0.0f : s * kecu::exp(m - top)) + (m2 == -INFINITY ? 0.0f : s2 * kecu::exp(m2 - top));
  m = top;
}

template <int NT>
__device__ __forceinline__ void ke_online_merge(float& m, float& s) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const float m2 = __shfl_xor_sync(0xffffffffu, m, off);
    const float s2 = __shfl_xor_sync(0xffffffffu, s, off);
    ke_online_combine(m, s, m2, s2);
  }
  if constexpr (NT > 32) {
    __shared__ float sm[NT / 32], ss[NT / 32];
    __syncthreads();
    if (threadIdx.x % 32 == 0) {
      sm[threadIdx.x / 32] = m;
      ss[threadIdx.x / 32] = s;
    }
    __syncthreads();
    m = sm[0];
    s = ss[0];
#pragma unroll
    for (int w = 1; w < NT / 32; ++w) ke_online_combine(m, s, sm[w], ss[w]);
  }
}
)CU";

bool HasSumOrProd(const ir::Region& region) {
  for (const auto& st : region.stages) {
    for (int id : st.reductions) {
      const auto k = region.graph.values[static_cast<size_t>(id)].reduce;
      if (k == ReduceKind::kSum || k == ReduceKind::kProd) return true;
    }
  }
  return false;
}

std::string Indented(const std::vector<std::string>& lines, int spaces) {
  std::string out;
  for (const auto& l : lines) out += std::string(static_cast<size_t>(spaces), ' ') + l + "\n";
  return out;
}

/// The kernel body for the region (the CPU rowwise template's stages, spelled per row
/// with the threads of the row striding over r).
class BodyWriter {
 public:
  BodyWriter(const ir::Region& region, const Settings& s)
      : g_(region.graph), region_(region), s_(s), emit_(region, MathFlavor::kLibm) {}

  std::vector<std::string> Run() {
    std::vector<std::string> out;
    LoopNames n;
    RowSection(-1, n, out);
    for (size_t s = 0; s < region_.stages.size(); ++s) {
      const auto& st = region_.stages[s];
      for (int id : st.reductions) out.push_back(fmt::format("{} a{} = {};", Acc(id), id, CppReduceInit(V(id).reduce)));
      out.push_back("for (int64_t r = lane; r < R; r += kThreadsPerRow) {");
      Block b;
      for (int id : st.reductions) {
        const std::string v = emit_.Emit(V(id).operands[0], false, n, b);
        b.lines.push_back(CppReduceUpdate(V(id).reduce, "a" + std::to_string(id), v));
      }
      for (const auto& l : b.lines) out.push_back("  " + l);
      out.push_back("}");
      for (int id : st.reductions) {
        out.push_back(fmt::format("a{0} = ke_row_reduce<kThreadsPerRow>(a{0}, {1}());", id, CudaReduceFunctor(V(id).reduce)));
        out.push_back(fmt::format("const float row{0} = static_cast<float>(a{0});", id));
      }
      RowSection(static_cast<int>(s), n, out);
    }
    Block elements;
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      if (L(g_.outputs[k]) != Level::kElement) continue;
      const std::string v = emit_.Emit(g_.outputs[k], false, n, elements);
      elements.lines.push_back(fmt::format("out{}[{}] = {};", k, emit_.ElementIndex(n), emit_.OutputCast(k, v)));
    }
    if (!elements.lines.empty()) {
      out.push_back("for (int64_t r = lane; r < R; r += kThreadsPerRow) {");
      for (const auto& l : elements.lines) out.push_back("  " + l);
      out.push_back("}");
    }
    Block rows;
    for (size_t k = 0; k < g_.outputs.size(); ++k) {
      if (L(g_.outputs[k]) != Level::kRow) continue;
      rows.lines.push_back(
          fmt::format("out{}[{}] = {};", k, emit_.RowIndex(n), emit_.OutputCast(k, emit_.RowRef(g_.outputs[k], n))));
    }
    if (!rows.lines.empty()) {
      out.push_back("if (lane == 0) {");
      for (const auto& l : rows.lines) out.push_back("  " + l);
      out.push_back("}");
    }
    for (auto& l : out) l = ToDeviceMath(l);
    return out;
  }

 private:
  const ir::Value& V(int id) const { return region_.ValueOf(id); }
  Level L(int id) const { return region_.LevelOf(id); }
  std::string Acc(int id) const { return CppAccumulatorType(V(id).reduce, s_.acc_double); }
  void RowSection(int s, const LoopNames& n, std::vector<std::string>& out) {
    Block b;
    for (const auto& v : g_.values) {
      if (L(v.id) != Level::kRow || v.kind != ValueKind::kElementwise) continue;
      if (region_.row_stage[static_cast<size_t>(v.id)] != s) continue;
      const std::string rhs = emit_.RowDefinition(v.id, n, b);
      b.lines.push_back(fmt::format("const auto row{} = {};", v.id, rhs));
    }
    out.insert(out.end(), b.lines.begin(), b.lines.end());
  }

  const ir::Graph& g_;
  const ir::Region& region_;
  const Settings& s_;
  ExprEmitter emit_;
};

Settings Decode(const nlohmann::json& knobs) {
  Settings s;
  s.mode = knobs.at("mode").get<std::string>();
  s.block = kWarpSize * knobs.at("num_warps").get<int>();
  s.acc_double = knobs.value("accumulator", "float32") == "float64";
  s.fast_math = knobs.at("math") == "fast";
  s.online = knobs.value("algorithm", "two_pass") == "online";
  return s;
}

std::string DlCode(core::DType t) { return t == core::DType::kInt64 ? "kDLInt, 64" : "kDLFloat, 32"; }
std::string CType(core::DType t) { return t == core::DType::kInt64 ? "int64_t" : "float"; }

}  // namespace

KnobSpace CudaReductionKnobSpace(const ir::Region& region, bool softmax) {
  std::vector<KnobDim> dims;
  if (region.inner > 1) {
    dims.push_back({"mode", {"thread"}, "thread", nullptr, nullptr, "", nullptr, "one thread per {}"});
  } else {
    dims.push_back({"mode", {"block", "warp"}, "block", nullptr, nullptr, "", nullptr, "one {} per row"});
  }
  dims.push_back({"num_warps", {4, 8, 16, 32}, 8, 8, nullptr, "", nullptr, "{} warps per block"});
  if (HasSumOrProd(region)) {
    dims.push_back({"accumulator", {"float32", "float64"}, "float32", "float64", "float32", "", nullptr, "{} accumulators"});
  }
  dims.push_back({"math", {"libm", "fast"}, "libm", "libm", nullptr, "", nullptr, "{} math"});
  if (softmax && region.inner == 1) {
    dims.push_back({"algorithm", {"two_pass", "online"}, "two_pass", "two_pass", "online", "", nullptr,
                    "{} softmax"});
  }
  return KnobSpace(std::move(dims));
}

CudaReductionTemplate::CudaReductionTemplate(ir::Region region, size_t num_inputs,
                                             std::optional<SoftmaxSpec> softmax)
    : SpecTemplate(region, CudaReductionKnobSpace(region, softmax.has_value())),
      num_inputs_(num_inputs),
      softmax_(std::move(softmax)) {}

std::vector<nlohmann::json> CudaReductionTemplate::Drafts() const {
  std::vector<nlohmann::json> out;
  if (spec_.inner > 1) {
    for (int warps : {8, 4}) out.push_back(space_.Canonical({{"mode", "thread"}, {"num_warps", warps}}));
    return out;
  }
  out.push_back(space_.Canonical({{"mode", "block"}, {"num_warps", 8}}));
  out.push_back(space_.Canonical({{"mode", "warp"}, {"num_warps", 8}}));
  if (softmax_) out.push_back(space_.Canonical({{"mode", "block"}, {"num_warps", 8}, {"algorithm", "online"}}));
  out.push_back(space_.Canonical({{"mode", "block"}, {"num_warps", 32}}));
  return out;
}

std::string CudaReductionTemplate::Summary(const nlohmann::json& knobs) const {
  return "CUDA row reduction, " + space_.Describe(space_.Canonical(knobs));
}

std::string CudaReductionTemplate::Generate(const nlohmann::json& knobs_in) const {
  const nlohmann::json knobs = space_.Canonical(knobs_in);
  const Settings s = Decode(knobs);
  const ir::Graph& g = spec_.graph;

  // Parameters: the inputs the graph reads (in<abi>), every output (out<k>).
  std::vector<std::string> params, args, pointers, checks;
  for (const auto& v : g.values) {
    if (v.kind != ValueKind::kInput) continue;
    params.push_back(fmt::format("const {}* __restrict__ in{}", CType(v.dtype), v.abi_index));
    args.push_back(fmt::format("in{}", v.abi_index));
    pointers.push_back(fmt::format("const {0}* in{1} = ke_data<const {0}>(inputs[{1}]);", CType(v.dtype), v.abi_index));
    checks.push_back(fmt::format("if (const int rc = ke_check_device_tensor(inputs[{}], {})) return rc;", v.abi_index,
                                 DlCode(v.dtype)));
    checks.push_back(fmt::format("if (ke_numel(inputs[{}]) != {}) return 3;", v.abi_index, ir::Numel(v.shape)));
  }
  for (size_t k = 0; k < g.outputs.size(); ++k) {
    const core::DType t = g.output_dtypes[k];
    params.push_back(fmt::format("{}* __restrict__ out{}", CType(t), k));
    args.push_back(fmt::format("out{}", k));
    pointers.push_back(fmt::format("{0}* out{1} = ke_data<{0}>(outputs[{1}]);", CType(t), k));
    checks.push_back(fmt::format("if (const int rc = ke_check_device_tensor(outputs[{}], {})) return rc;", k, DlCode(t)));
    checks.push_back(fmt::format("if (ke_numel(outputs[{}]) != {}) return 3;", k,
                                 ir::Numel(g.values[static_cast<size_t>(g.outputs[k])].shape)));
  }

  std::vector<std::string> body;
  if (s.online) {
    const std::string x = args.front(), y = "out0";
    const std::string write = softmax_->log ? "(x[r] - m) - kecu::log(s)" : "kecu::exp(x[r] - m) / s";
    body = {"const float* x = " + x + " + o * R;", "float* y = " + y + " + o * R;",
            "float m = -INFINITY, s = 0.0f;",
            "for (int64_t r = lane; r < R; r += kThreadsPerRow) {",
            "  const float v = x[r];",
            "  if (v > m) {",
            "    s = s * kecu::exp(m - v) + 1.0f;",
            "    m = v;",
            "  } else if (v != -INFINITY) {",
            "    s += kecu::exp(v - m);",
            "  }",
            "}",
            "ke_online_merge<kThreadsPerRow>(m, s);",
            "for (int64_t r = lane; r < R; r += kThreadsPerRow) y[r] = " + write + ";"};
  } else {
    body = BodyWriter(spec_, s).Run();
  }

  const std::string threads_per_row = s.mode == "block" ? "kBlock" : s.mode == "warp" ? "32" : "1";
  const std::string row_of_thread =
      s.mode == "block"   ? "const int lane = threadIdx.x;\n  const int64_t q = blockIdx.x;"
      : s.mode == "warp"  ? "const int lane = threadIdx.x % 32;\n  const int64_t q = static_cast<int64_t>(blockIdx.x) * "
                            "(kBlock / 32) + threadIdx.x / 32;"
                          : "const int lane = 0;\n  const int64_t q = static_cast<int64_t>(blockIdx.x) * kBlock + "
                            "threadIdx.x;";
  const std::string grid = s.mode == "block" ? "kRows" : s.mode == "warp" ? "(kRows + kBlock / 32 - 1) / (kBlock / 32)"
                                                                           : "(kRows + kBlock - 1) / kBlock";
  const std::string what = fmt::format(
      "Row reductions of the captured graph over a [O, R, I] = [{}, {}, {}] region{}, float32.",
      spec_.outer, spec_.reduce, spec_.inner,
      softmax_ ? (softmax_->log ? " (log_softmax over the last dim)" : " (softmax over the last dim)") : "");
  std::string out = CudaHeader("cuda_reduction", what, knobs) + "\n" + CudaIncludes() + "\n" + CudaAbiHelpers() +
                    "\n" + CudaMathNamespace(s.fast_math) + "\n" + kReduceHelpers + (s.online ? kOnlineHelpers : "");
  out += fmt::format(R"CU(
constexpr int64_t O = {o}, R = {r}, I = {i};  // [outer, reduced, inner]
constexpr int64_t kRows = O * I;
constexpr int kBlock = {block};
constexpr int kThreadsPerRow = {tpr};

__global__ void __launch_bounds__(kBlock) ke_rows({params}) {{
  {row_of_thread}
  if (q >= kRows) return;  // whole rows only: every thread of a row returns together
  const int64_t o = q / I, i = q % I;
  (void)o;
  (void)i;
  (void)lane;
{body}}}

extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs, DLTensor* outputs,
                                  int32_t num_outputs) {{
  if (num_inputs != {num_inputs} || num_outputs != {num_outputs}) return 1;
{checks}  if (kRows == 0) return 0;
  ke_use_device(outputs[0]);
{pointers}  const int64_t grid = {grid};
  ke_rows<<<static_cast<unsigned>(grid), kBlock>>>({args});
{check}  return 0;
}}
)CU",
                     fmt::arg("o", spec_.outer), fmt::arg("r", spec_.reduce), fmt::arg("i", spec_.inner),
                     fmt::arg("block", s.block), fmt::arg("tpr", threads_per_row),
                     fmt::arg("params", fmt::join(params, ", ")), fmt::arg("row_of_thread", row_of_thread),
                     fmt::arg("body", Indented(body, 2)), fmt::arg("num_inputs", num_inputs_),
                     fmt::arg("num_outputs", g.outputs.size()), fmt::arg("checks", Indented(checks, 2)),
                     fmt::arg("pointers", Indented(pointers, 2)), fmt::arg("grid", grid),
                     fmt::arg("args", fmt::join(args, ", ")), fmt::arg("check", CudaLaunchCheck()));
  return out;
}

TemplateMatch MatchCudaReduction(const core::Problem& problem) {
  ir::LowerResult lowered = ir::Lower(problem.graph);
  if (!lowered.graph) return {nullptr, lowered.unsupported};
  ir::RegionResult region = ir::AnalyzeRegion(*lowered.graph);
  if (!region.region) return {nullptr, region.unsupported};
  const ir::Region& r = *region.region;
  const bool tail = !r.tail_inputs.empty() ||
                    std::any_of(r.level.begin(), r.level.end(), [](Level l) { return l == Level::kTail; });
  if (tail) {
    return {nullptr, "unsupported_graph: a reduction to a scalar (cuda_reduction covers row reductions only)"};
  }
  if (!r.HasReductions()) return {nullptr, "unsupported_graph: no reduction (and not a same-shape pointwise graph)"};
  SoftmaxMatch softmax = MatchSoftmax(problem.graph);
  return {std::make_unique<CudaReductionTemplate>(*region.region, problem.inputs.size(), softmax.spec), ""};
}

TemplateMatch MatchCudaTemplate(const core::Problem& problem) {
  if (problem.graph.nodes.empty()) return NoGraphMatch(problem);
  PointwiseBuild pointwise = BuildPointwiseExpr(problem.graph, MathFlavor::kLibm);
  if (pointwise.expr) return {std::make_unique<CudaPointwiseTemplate>(std::move(*pointwise.expr)), ""};
  return MatchCudaReduction(problem);
}

}  // namespace kernelevolve::operators::templates
