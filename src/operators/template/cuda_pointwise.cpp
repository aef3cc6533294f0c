#include "operators/template/cuda_pointwise.h"

#include <fmt/format.h>

#include "operators/template/cuda_common.h"

namespace kernelevolve::operators::templates {
namespace {

std::string Join(const std::vector<std::string>& parts, const std::string& sep) {
  std::string out;
  for (size_t k = 0; k < parts.size(); ++k) out += (k ? sep : "") + parts[k];
  return out;
}

/// `ke_fused(a0.c, a1.c, ...)` for one float4 component `c`, or with `index` for scalars.
std::string FusedCall(size_t inputs, const std::string& arg_of) {
  std::vector<std::string> args;
  for (size_t k = 0; k < inputs; ++k) args.push_back(fmt::format(fmt::runtime(arg_of), k));
  return "ke_fused(" + Join(args, ", ") + ")";
}

}  // namespace

KnobSpace CudaPointwiseKnobSpace() {
  return KnobSpace({
      {"num_warps", {4, 8, 16, 32}, 8, 8, nullptr, "", nullptr, "{} warps per block"},
      {"vector_width", {1, 4}, 4, 1, 4, "", nullptr, "{}-float loads"},
      {"unroll", {1, 2, 4}, 1, 1, nullptr, "", nullptr, "{} vectors per thread per step"},
      {"math", {"libm", "fast"}, "libm", "libm", nullptr, "", nullptr, "{} math"},
  });
}

CudaPointwiseTemplate::CudaPointwiseTemplate(PointwiseExpr expr)
    : expr_(std::move(expr)), space_(CudaPointwiseKnobSpace()) {}

std::vector<nlohmann::json> CudaPointwiseTemplate::Drafts() const {
  return {space_.Canonical({{"num_warps", 8}, {"vector_width", 4}, {"unroll", 1}}),
          space_.Canonical({{"num_warps", 16}, {"vector_width", 4}, {"unroll", 2}}),
          space_.Canonical({{"num_warps", 4}, {"vector_width", 1}, {"unroll", 1}})};
}

std::string CudaPointwiseTemplate::Summary(const nlohmann::json& knobs) const {
  return "CUDA fused pointwise, " + space_.Describe(space_.Canonical(knobs));
}

std::string CudaPointwiseTemplate::Generate(const nlohmann::json& knobs_in) const {
  const nlohmann::json knobs = space_.Canonical(knobs_in);
  const int block = kWarpSize * knobs.at("num_warps").get<int>();
  const int vec = knobs.at("vector_width").get<int>();
  const int items = knobs.at("unroll").get<int>();
  const bool fast = knobs.at("math") == "fast";
  const size_t k = expr_.input_vars.size();

  std::string fused = "// One element of the fused graph.\n__device__ __forceinline__ float ke_fused(";
  std::vector<std::string> params;
  for (const auto& v : expr_.input_vars) params.push_back("float " + v);
  fused += Join(params, ", ") + ") {\n";
  for (const auto& st : expr_.statements) {
    fused += "  // " + st.origin + "\n";
    fused += fmt::format("  const {} {} = {};\n", st.is_bool ? "bool" : "float", st.var, ToDeviceMath(st.expr));
  }
  fused += "  return " + expr_.result_var + ";\n}\n";

  std::vector<std::string> in_params, in_args, vec_loads;
  for (size_t i = 0; i < k; ++i) {
    in_params.push_back(fmt::format("const float* __restrict__ in{}", i));
    in_args.push_back(fmt::format("in{}", i));
    vec_loads.push_back(fmt::format("const float4 a{0} = reinterpret_cast<const float4*>(in{0})[j];", i));
  }
  std::string vec_body = "        " + Join(vec_loads, "\n        ") + "\n        float4 r;\n";
  for (const char* c : {"x", "y", "z", "w"}) {
    vec_body += fmt::format("        r.{} = {};\n", c, FusedCall(k, std::string("a{}.") + c));
  }
  const std::string scalar_call = FusedCall(k, "in{}[i]");
  std::string aligned;
  for (size_t i = 0; i < k; ++i) aligned += fmt::format("reinterpret_cast<uintptr_t>(in{}) | ", i);
  aligned += "reinterpret_cast<uintptr_t>(out)";

  std::string what = fmt::format("out = the fused elementwise graph ({} op{}) over shape {}, float32.",
                                 expr_.statements.size(), expr_.statements.size() == 1 ? "" : "s",
                                 nlohmann::json(expr_.shape).dump());
  std::string out = CudaHeader("cuda_pointwise", what, knobs) + "\n" + CudaIncludes() + "\n" + CudaAbiHelpers() +
                    "\n" + CudaMathNamespace(fast) + "\n" + fused;
  out += fmt::format(R"CU(
constexpr int kBlock = {block};
constexpr int kItems = {items};

// Grid-stride loop over VEC-wide groups (VEC 4: float4 loads and stores), kItems
// groups per thread per step, then the n % VEC tail element by element.
template <int VEC>
__global__ void __launch_bounds__(kBlock) ke_pointwise({in_params}, float* __restrict__ out, int64_t n) {{
  const int64_t groups = n / VEC;
  const int64_t step = static_cast<int64_t>(gridDim.x) * kBlock * kItems;
  for (int64_t base = static_cast<int64_t>(blockIdx.x) * kBlock * kItems + threadIdx.x; base < groups;
       base += step) {{
#pragma unroll
    for (int u = 0; u < kItems; ++u) {{
      const int64_t j = base + static_cast<int64_t>(u) * kBlock;
      if (j >= groups) break;
      if constexpr (VEC == 4) {{
{vec_body}        reinterpret_cast<float4*>(out)[j] = r;
      }} else {{
        const int64_t i = j;
        out[i] = {scalar_call};
      }}
    }}
  }}
  const int64_t tail = groups * VEC;
  for (int64_t i = tail + static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * kBlock) {{
    out[i] = {scalar_call};
  }}
}}

extern "C" int kernelevolve_entry(const DLTensor* inputs, int32_t num_inputs, DLTensor* outputs,
                                  int32_t num_outputs) {{
  if (num_inputs != {k} || num_outputs != 1) return 1;
  for (int32_t t = 0; t < num_inputs; ++t) {{
    if (const int rc = ke_check_device_tensor(inputs[t], kDLFloat, 32)) return rc;
  }}
  if (const int rc = ke_check_device_tensor(outputs[0], kDLFloat, 32)) return rc;
  const int64_t n = ke_numel(outputs[0]);
  for (int32_t t = 0; t < num_inputs; ++t) {{
    if (ke_numel(inputs[t]) != n) return 3;
  }}
  if (n == 0) return 0;
  ke_use_device(outputs[0]);
{pointers}  float* out = ke_data<float>(outputs[0]);
  const bool aligned = (({aligned}) % 16) == 0;
  const int vec = ({vec} == 4 && aligned) ? 4 : 1;
  const int64_t groups = (n / vec + kItems - 1) / kItems;
  const int64_t wanted = (groups + kBlock - 1) / kBlock;
  const int64_t cap = static_cast<int64_t>(ke_sm_count()) * (2048 / kBlock) * 4;  // 4 waves of full SMs
  const unsigned grid = static_cast<unsigned>(wanted < 1 ? 1 : (wanted < cap ? wanted : cap));
  if (vec == 4) {{
    ke_pointwise<4><<<grid, kBlock>>>({in_args}, out, n);
  }} else {{
    ke_pointwise<1><<<grid, kBlock>>>({in_args}, out, n);
  }}
{check}  return 0;
}}
)CU",
                     fmt::arg("block", block), fmt::arg("items", items), fmt::arg("in_params", Join(in_params, ", ")),
                     fmt::arg("vec_body", vec_body), fmt::arg("scalar_call", scalar_call), fmt::arg("k", k),
                     fmt::arg("pointers",
                              [&] {
                                std::string p;
                                for (size_t i = 0; i < k; ++i) {
                                  p += fmt::format("  const float* in{0} = ke_data<const float>(inputs[{0}]);\n", i);
                                }
                                return p;
                              }()),
                     fmt::arg("aligned", aligned), fmt::arg("vec", vec), fmt::arg("in_args", Join(in_args, ", ")),
                     fmt::arg("check", CudaLaunchCheck()));
  return out;
}

}  // namespace kernelevolve::operators::templates
