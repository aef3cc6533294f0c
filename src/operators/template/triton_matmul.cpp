#include "operators/template/triton_matmul.h"

#include <fmt/format.h>

#include <cstdint>

namespace kernelevolve::operators::templates {
namespace {

constexpr int64_t kInt32Limit = int64_t{1} << 31;

// Tiled matmul with grouped program order, after the Triton tutorial
// (03-matrix-multiplication.py): program pid computes the BLOCK_M x BLOCK_N tile
// (pid_m, pid_n); GROUP_M consecutive row blocks sweep the column blocks together so
// the B panels they share stay in L2. Rows and columns past the edge wrap around
// (% M, % N), so the operand loads need no mask; the store masks them.
constexpr const char* kKernelHead = R"(

@triton.jit
def _matmul_epilogue({params}c_ptr,
                     M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, K_TILES: tl.constexpr,
                     STRIDE_AM: tl.constexpr, STRIDE_AK: tl.constexpr,
                     STRIDE_BK: tl.constexpr, STRIDE_BN: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + (offs_m % M){wide}[:, None] * STRIDE_AM + offs_k[None, :] * STRIDE_AK
    b_ptrs = b_ptr + offs_k[:, None] * STRIDE_BK + (offs_n % N){wide}[None, :] * STRIDE_BN
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in tl.range(0, K_TILES):
{loads}        acc = tl.dot(a, b, acc{precision})
        a_ptrs += BLOCK_K * STRIDE_AK
        b_ptrs += BLOCK_K * STRIDE_BK
    # Epilogue on the float32 accumulator tile; one store in the output dtype.
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
)";

/// The load of one epilogue input, by how it broadcasts over the tile.
std::string EpilogueLoad(const EpilogueInput& in) {
  const std::string cast = in.dtype == core::DType::kBool ? "" : ".to(tl.float32)";
  switch (in.broadcast) {
    case EpilogueBroadcast::kFull:
      return fmt::format(
          "    {0} = tl.load({0}_ptr + rows * N + offs_n[None, :], mask=mask, other=0.0){1}\n",
          in.var, cast);
    case EpilogueBroadcast::kRow:
      return fmt::format(
          "    {0} = tl.load({0}_ptr + offs_n[None, :], mask=offs_n[None, :] < N, other=0.0){1}\n",
          in.var, cast);
    case EpilogueBroadcast::kColumn:
      return fmt::format(
          "    {0} = tl.load({0}_ptr + offs_m[:, None], mask=offs_m[:, None] < M, other=0.0){1}\n",
          in.var, cast);
    case EpilogueBroadcast::kScalar:
      return fmt::format("    {0} = tl.load({0}_ptr){1}\n", in.var, cast);
  }
  return "";
}

std::string Tile(const nlohmann::json& knobs) {
  return fmt::format("{}x{}x{}", knobs.at("block_m").get<int>(), knobs.at("block_n").get<int>(),
                     knobs.at("block_k").get<int>());
}

}  // namespace

KnobSpace TritonMatmulKnobSpace(bool float32_operands, bool tf32) {
  std::vector<KnobDim> dims = {
      {"block_m", {64, 128, 256}, 128, 64, nullptr, "", nullptr, "BLOCK_M {}"},
      {"block_n", {64, 128, 256}, 128, 64, 256, "", nullptr, "BLOCK_N {}"},
      {"block_k", {32, 64, 128}, 64, 32, nullptr, "", nullptr, "BLOCK_K {}"},
      {"group_m", {1, 4, 8}, 8, nullptr, 8, "", nullptr, "group of {} row blocks"},
      {"num_stages", {2, 3, 4, 5}, 3, 2, nullptr, "", nullptr, "{} pipeline stages"},
      {"num_warps", {4, 8}, 8, 4, nullptr, "", nullptr, "{} warps"},
  };
  if (float32_operands) dims.push_back(InputPrecisionKnob(tf32));
  return KnobSpace(std::move(dims));
}

TritonMatmulTemplate::TritonMatmulTemplate(TritonMatmulSpec spec)
    : spec_(std::move(spec)),
      space_(TritonMatmulKnobSpace(spec_.dtype == core::DType::kFloat32, spec_.reference_tf32)) {}

std::vector<nlohmann::json> TritonMatmulTemplate::Drafts() const {
  // Source: the Triton tutorial's get_cuda_autotune_config() (first entries).
  auto knobs = [](int bm, int bn, int bk, int stages, int warps) {
    return nlohmann::json{{"block_m", bm}, {"block_n", bn},        {"block_k", bk},
                          {"group_m", 8},  {"num_stages", stages}, {"num_warps", warps}};
  };
  std::vector<nlohmann::json> drafts = {knobs(128, 256, 64, 3, 8), knobs(128, 128, 64, 4, 4), knobs(64, 256, 32, 4, 4),
                                        knobs(128, 128, 32, 4, 4)};
  if (space_.Find("input_precision") != nullptr) {
    // float32 operands: IEEE FMA dots ran at about 1 TFLOP/s on an H100 (11% of
    // cuBLAS's float32 peak); 3xTF32 first, on tiles whose float32 stages fit shared
    // memory (3 x (128 x 32 + 32 x 128) x 4 bytes = 96 KB), then the IEEE tiles.
    nlohmann::json tc = knobs(128, 128, 32, 3, 8);
    tc["input_precision"] = "tf32x3";
    drafts.insert(drafts.begin(), tc);
    if (spec_.reference_tf32) {  // the reference's own precision, one tensor-core product a step
      tc["input_precision"] = "tf32";
      drafts.insert(drafts.begin(), tc);
    }
    for (auto& d : drafts) d = space_.Canonical(d);
  }
  return drafts;
}

std::string TritonMatmulTemplate::Summary(const nlohmann::json& knobs_in) const {
  const nlohmann::json knobs = space_.Canonical(knobs_in);
  std::string ops;
  for (size_t i = 1; i < spec_.ops.size(); ++i) ops += (i > 1 ? ", " : "") + spec_.ops[i];
  return fmt::format("Triton matmul {}x{}x{} {}{}, {} tiles, {}", spec_.m, spec_.n, spec_.k,
                     core::DTypeName(spec_.dtype), ops.empty() ? "" : " + epilogue [" + ops + "]",
                     Tile(knobs), space_.Describe(knobs));
}

std::string TritonMatmulTemplate::Generate(const nlohmann::json& knobs_in) const {
  const nlohmann::json knobs = space_.Canonical(knobs_in);
  const int bm = knobs.at("block_m").get<int>(), bn = knobs.at("block_n").get<int>();
  const int bk = knobs.at("block_k").get<int>();
  const bool even_k = spec_.k % bk == 0;
  const bool wide = spec_.m * spec_.k >= kInt32Limit || spec_.k * spec_.n >= kInt32Limit ||
                    spec_.m * spec_.n >= kInt32Limit;
  std::string params = "a_ptr, b_ptr, ";
  std::string args = fmt::format("inputs[{}], inputs[{}], ", spec_.a.abi_index, spec_.b.abi_index);
  for (const auto& in : spec_.inputs) {
    params += in.var + "_ptr, ";
    args += fmt::format("inputs[{}], ", in.abi_index);
  }
  std::string loads;
  if (even_k) {
    loads = "        a = tl.load(a_ptrs)\n        b = tl.load(b_ptrs)\n";
  } else {
    loads =
        "        k_left = K - kk * BLOCK_K\n"
        "        a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)\n"
        "        b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)\n";
  }
  // float32 operands: tl.dot defaults to TF32, 10 mantissa bits, far outside float32
  // tolerance; the knob picks IEEE FMA or 3xTF32 (InputPrecisionKnob).
  const std::string precision =
      knobs.contains("input_precision")
          ? fmt::format(", input_precision=\"{}\"", knobs.at("input_precision").get<std::string>())
          : "";
  std::string out = fmt::format(
      "# Generated by kernelevolve, template triton_matmul (--target triton).\n"
      "# C[{m}, {n}] = epilogue(A[{m}, {k}] @ B[{k}, {n}]), {dtype} operands{ta}{tb}, float32 "
      "accumulation,\n"
      "# {out} output. Ops: {ops}. Knobs: {knobs}.\n"
      "# Tiling and grouped program order after the Triton matmul tutorial "
      "(03-matrix-multiplication.py).\n"
      "# ABI: kernelevolve_entry(inputs, outputs) with contiguous device tensors (docs/gpu.md).\n"
      "import triton\nimport triton.language as tl\n",
      fmt::arg("m", spec_.m), fmt::arg("n", spec_.n), fmt::arg("k", spec_.k),
      fmt::arg("dtype", core::DTypeName(spec_.dtype)),
      fmt::arg("ta", spec_.a.transposed ? " (A read transposed)" : ""),
      fmt::arg("tb", spec_.b.transposed ? " (B read transposed)" : ""),
      fmt::arg("out", core::DTypeName(spec_.out_dtype)),
      fmt::arg("ops", fmt::join(spec_.ops, ", ")), fmt::arg("knobs", knobs.dump()));
  out += fmt::format(kKernelHead, fmt::arg("params", params),
                     fmt::arg("wide", wide ? ".to(tl.int64)" : ""), fmt::arg("loads", loads),
                     fmt::arg("precision", precision));
  out += wide ? "    rows = offs_m.to(tl.int64)[:, None]\n" : "    rows = offs_m[:, None]\n";
  for (const auto& in : spec_.inputs) out += EpilogueLoad(in);
  for (const auto& line : spec_.lines) out += "    " + line + "\n";
  out += fmt::format(
      "    tl.store(c_ptr + rows * N + offs_n[None, :], {}.to(c_ptr.dtype.element_ty), "
      "mask=mask)\n",
      spec_.result_var);
  // Strides of the logical A [M, K] and B [K, N] over contiguous inputs.
  const int64_t am = spec_.a.transposed ? 1 : spec_.k, ak = spec_.a.transposed ? spec_.m : 1;
  const int64_t bkk = spec_.b.transposed ? 1 : spec_.n, bnn = spec_.b.transposed ? spec_.k : 1;
  const int64_t grid = ((spec_.m + bm - 1) / bm) * ((spec_.n + bn - 1) / bn);
  out += fmt::format(
      "\n\ndef kernelevolve_entry(inputs, outputs):\n"
      "    _matmul_epilogue[({grid},)]({args}outputs[0],\n"
      "                              M={m}, N={n}, K={k}, K_TILES={tiles},\n"
      "                              STRIDE_AM={am}, STRIDE_AK={ak}, STRIDE_BK={bk_}, "
      "STRIDE_BN={bn_},\n"
      "                              BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_K={bk}, GROUP_M={group},\n"
      "                              num_stages={stages}, num_warps={warps})\n",
      fmt::arg("grid", grid), fmt::arg("args", args), fmt::arg("m", spec_.m),
      fmt::arg("n", spec_.n), fmt::arg("k", spec_.k), fmt::arg("tiles", (spec_.k + bk - 1) / bk),
      fmt::arg("am", am), fmt::arg("ak", ak), fmt::arg("bk_", bkk), fmt::arg("bn_", bnn),
      fmt::arg("bm", bm), fmt::arg("bn", bn), fmt::arg("bk", bk),
      fmt::arg("group", knobs.at("group_m").get<int>()),
      fmt::arg("stages", knobs.at("num_stages").get<int>()),
      fmt::arg("warps", knobs.at("num_warps").get<int>()));
  return out;
}

}  // namespace kernelevolve::operators::templates
