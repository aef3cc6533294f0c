#include "operators/template/triton_matmul.h"

#include <fmt/format.h>

#include <cstdint>

#include "operators/codegen/triton/main_loop_triton.h"
#include "operators/codegen/triton/tf32_round.h"

namespace kernelevolve::operators::templates {
namespace {

constexpr int64_t kInt32Limit = int64_t{1} << 31;
// A split-K draft fills about one wave of the SMs.
constexpr int64_t kTargetPrograms = codegen::kDraftGpuSms;
// Depth each split-K slice sums at least (so a slice is several K tiles deep).
constexpr int64_t kMinSliceDepth = 512;
constexpr int64_t kSplitKValues[] = {1, 2, 4, 8, 16, 32};
// Split-K's second kernel: a memory-bound pass over split x M x N floats, in tiles of
// this side (more programs than the product's 128 x 128 tiles give).
constexpr int64_t kReduceBlock = 64;

// Tiled matmul with grouped program order, after the Triton tutorial
// (03-matrix-multiplication.py): program pid computes the BLOCK_M x BLOCK_N tile
// (pid_m, pid_n); GROUP_M consecutive row blocks sweep the column blocks together so
// the B panels they share stay in L2. Rows and columns past the edge wrap around
// (% M, % N), so the operand loads need no mask; the store masks them.
// The program's output tile, shared by the one-pass kernel and split-K's partial
// kernel: pid -> (pid_m, pid_n) in grouped order, the tile's rows and columns, the
// operand pointers at K tile `k_first` ({a_start}, {b_start}: the offsets of that tile),
// and the float32 sum over K tiles [k_first, k_end).
constexpr const char* kProgramTile = R"(    num_pid_m = tl.cdiv(M, BLOCK_M)
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
    a_ptrs = a_ptr + (offs_m % M){wide}[:, None] * STRIDE_AM + offs_k[None, :] * STRIDE_AK{a_start}
    b_ptrs = b_ptr + offs_k[:, None] * STRIDE_BK + (offs_n % N){wide}[None, :] * STRIDE_BN{b_start}
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for kk in tl.range({k_first}, {k_end}):
{loads}        acc = tl.dot({dot_a}, {dot_b}, acc{precision})
        a_ptrs += BLOCK_K * STRIDE_AK
        b_ptrs += BLOCK_K * STRIDE_BK
)";

// One pass: the whole depth, then the epilogue on the float32 accumulator tile and one
// store in the output dtype.
constexpr const char* kKernelHead = R"(

@triton.jit
def _matmul_epilogue({params}c_ptr,
                     M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, K_TILES: tl.constexpr,
                     STRIDE_AM: tl.constexpr, STRIDE_AK: tl.constexpr,
                     STRIDE_BK: tl.constexpr, STRIDE_BN: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
{tile}    # Epilogue on the float32 accumulator tile; one store in the output dtype.
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
)";

// Split-K (CUTLASS's "serial/parallel split-K"; Triton's matmul tutorial leaves it out):
// program (pid, pid_k) sums K tiles [pid_k * TILES_PER_SPLIT, ...) of its output tile
// into a float32 workspace slice; a second kernel adds the SPLIT_K slices in a fixed
// order and applies the epilogue. For outputs with fewer tiles than the GPU has SMs and
// a long depth (M = N = 512, K = 131072: 16 tiles of 128 x 128 on 132 SMs).
constexpr const char* kSplitKHead = R"(

@triton.jit
def _matmul_split_k(a_ptr, b_ptr, ws_ptr,
                    M: tl.constexpr, N: tl.constexpr, K: tl.constexpr, K_TILES: tl.constexpr,
                    TILES_PER_SPLIT: tl.constexpr,
                    STRIDE_AM: tl.constexpr, STRIDE_AK: tl.constexpr,
                    STRIDE_BK: tl.constexpr, STRIDE_BN: tl.constexpr,
                    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                    GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    pid_k = tl.program_id(1)
    k_first = pid_k * TILES_PER_SPLIT
    k_end = tl.minimum(k_first + TILES_PER_SPLIT, K_TILES)
{tile}    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    rows = offs_m{wide}[:, None]
    tl.store(ws_ptr + pid_k{wide} * M * N + rows * N + offs_n[None, :], acc, mask=mask)


@triton.jit
def _matmul_split_k_epilogue({params}ws_ptr, c_ptr,
                             M: tl.constexpr, N: tl.constexpr, SPLIT_K: tl.constexpr,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs_m = (pid // tl.cdiv(N, BLOCK_N)) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = (pid % tl.cdiv(N, BLOCK_N)) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (offs_m[:, None] < M) & (offs_n[None, :] < N)
    rows = offs_m{wide}[:, None]
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for s in tl.static_range(SPLIT_K):
        acc += tl.load(ws_ptr + s * M * N + rows * N + offs_n[None, :], mask=mask, other=0.0)
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

KnobSpace TritonMatmulKnobSpace(bool float32_operands, bool tf32, int64_t k) {
  std::vector<KnobDim> dims = {
      {"block_m", {64, 128, 256}, 128, 64, nullptr, "", nullptr, "BLOCK_M {}"},
      {"block_n", {64, 128, 256}, 128, 64, 256, "", nullptr, "BLOCK_N {}"},
      {"block_k", {32, 64, 128}, 64, 32, nullptr, "", nullptr, "BLOCK_K {}"},
      {"group_m", {1, 4, 8}, 8, nullptr, 8, "", nullptr, "group of {} row blocks"},
      {"num_stages", {2, 3, 4, 5}, 3, 2, nullptr, "", nullptr, "{} pipeline stages"},
      {"num_warps", {4, 8}, 8, 4, nullptr, "", nullptr, "{} warps"},
  };
  if (float32_operands) dims.push_back(InputPrecisionKnob(tf32));
  if (k >= 2 * kMinSliceDepth) {
    dims.push_back({"split_k", KnobValuesUpTo({std::begin(kSplitKValues), std::end(kSplitKValues)}, k / kMinSliceDepth),
                    1, 1, nullptr, "", nullptr, "K split {} ways"});
  }
  return KnobSpace(std::move(dims));
}

TritonMatmulTemplate::TritonMatmulTemplate(TritonMatmulSpec spec)
    : spec_(std::move(spec)),
      space_(TritonMatmulKnobSpace(spec_.dtype == core::DType::kFloat32, spec_.reference_tf32, spec_.k)) {}

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
  }
  if (const KnobDim* split = space_.Find("split_k")) {
    // Fewer 128 x 128 output tiles than kTargetPrograms and a long depth: the first draft
    // again, its depth split so that about kTargetPrograms programs run.
    const int64_t tiles = ((spec_.m + 127) / 128) * ((spec_.n + 127) / 128);
    if (tiles * 2 <= kTargetPrograms) {
      nlohmann::json wide = drafts.front();
      wide["split_k"] = NearestKnobValue(split->values, (kTargetPrograms + tiles - 1) / tiles);
      if (wide["split_k"] != 1) drafts.insert(drafts.begin(), wide);
    }
  }
  for (auto& d : drafts) d = space_.Canonical(d);
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
  std::string epilogue_args;  // the epilogue's inputs, after the operands
  for (const auto& in : spec_.inputs) {
    params += in.var + "_ptr, ";
    epilogue_args += fmt::format("inputs[{}], ", in.abi_index);
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
  const int64_t k_tiles = (spec_.k + bk - 1) / bk;
  // Split-K: TILES_PER_SPLIT K tiles per slice, and as many slices as that needs (never
  // an empty one).
  const int64_t split_knob = knobs.value("split_k", 1);
  const int64_t per_split = (k_tiles + split_knob - 1) / split_knob;
  const int64_t split = (k_tiles + per_split - 1) / per_split;
  const bool wide_ws = split > 1 && split * spec_.m * spec_.n >= kInt32Limit;
  const std::string wide_text = wide || wide_ws ? ".to(tl.int64)" : "";
  // A plain TF32 dot takes operands rounded to TF32 by the entry (codegen/tf32_round.h).
  const bool plain_tf32 = knobs.value("input_precision", "") == "tf32";
  if (plain_tf32) out += "import torch\n" + codegen::RoundTf32Helper();
  const std::string tile = fmt::format(
      kProgramTile, fmt::arg("wide", wide ? ".to(tl.int64)" : ""), fmt::arg("loads", loads),
      fmt::arg("dot_a", "a"), fmt::arg("dot_b", "b"),
      fmt::arg("precision", precision), fmt::arg("k_first", split > 1 ? "k_first" : "0"),
      fmt::arg("k_end", split > 1 ? "k_end" : "K_TILES"),
      fmt::arg("a_start", split > 1 ? fmt::format(" + k_first{} * BLOCK_K * STRIDE_AK", wide_text) : ""),
      fmt::arg("b_start", split > 1 ? fmt::format(" + k_first{} * BLOCK_K * STRIDE_BK", wide_text) : ""));
  if (split > 1) {
    if (!plain_tf32) out += "import torch\n";
    out += fmt::format(kSplitKHead, fmt::arg("tile", tile), fmt::arg("params", params.substr(std::string("a_ptr, b_ptr, ").size())),
                       fmt::arg("wide", wide_text));
  } else {
    out += fmt::format(kKernelHead, fmt::arg("params", params), fmt::arg("tile", tile));
    out += wide ? "    rows = offs_m.to(tl.int64)[:, None]\n" : "    rows = offs_m[:, None]\n";
  }
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
  const auto operand = [&](int64_t index) {
    const std::string tensor = fmt::format("inputs[{}]", index);
    return plain_tf32 ? codegen::RoundedCopy(tensor) : tensor;
  };
  const std::string operands = fmt::format("{}, {}, ", operand(spec_.a.abi_index), operand(spec_.b.abi_index));
  const std::string shape_args = fmt::format(
      "M={m}, N={n}, K={k}, K_TILES={tiles},{per_split}\n"
      "                              STRIDE_AM={am}, STRIDE_AK={ak}, STRIDE_BK={bk_}, STRIDE_BN={bn_},\n"
      "                              BLOCK_M={bm}, BLOCK_N={bn}, BLOCK_K={bk}, GROUP_M={group},\n"
      "                              num_stages={stages}, num_warps={warps})\n",
      fmt::arg("m", spec_.m), fmt::arg("n", spec_.n), fmt::arg("k", spec_.k), fmt::arg("tiles", k_tiles),
      fmt::arg("per_split", split > 1 ? fmt::format(" TILES_PER_SPLIT={},", per_split) : ""), fmt::arg("am", am),
      fmt::arg("ak", ak), fmt::arg("bk_", bkk), fmt::arg("bn_", bnn), fmt::arg("bm", bm), fmt::arg("bn", bn),
      fmt::arg("bk", bk), fmt::arg("group", knobs.at("group_m").get<int>()),
      fmt::arg("stages", knobs.at("num_stages").get<int>()), fmt::arg("warps", knobs.at("num_warps").get<int>()));
  if (split == 1) {
    out += fmt::format("\n\ndef kernelevolve_entry(inputs, outputs):\n"
                       "    _matmul_epilogue[({grid},)]({args}outputs[0],\n"
                       "                              {shape_args}",
                       fmt::arg("grid", grid), fmt::arg("args", operands + epilogue_args),
                       fmt::arg("shape_args", shape_args));
    return out;
  }
  // The workspace comes from PyTorch's caching allocator on each call (no host sync).
  out += fmt::format(
      "\n\ndef kernelevolve_entry(inputs, outputs):\n"
      "    ws = torch.empty(({split}, {m}, {n}), dtype=torch.float32, device=outputs[0].device)\n"
      "    _matmul_split_k[({grid}, {split})]({operands}ws,\n"
      "                              {shape_args}"
      "    _matmul_split_k_epilogue[({reduce_grid},)]({epilogue_args}ws, outputs[0], M={m}, N={n}, "
      "SPLIT_K={split},\n"
      "                                      BLOCK_M={rb}, BLOCK_N={rb}, num_warps=4)\n",
      fmt::arg("split", split), fmt::arg("m", spec_.m), fmt::arg("n", spec_.n), fmt::arg("grid", grid),
      fmt::arg("operands", operands), fmt::arg("shape_args", shape_args),
      fmt::arg("epilogue_args", epilogue_args), fmt::arg("rb", kReduceBlock),
      fmt::arg("reduce_grid", ((spec_.m + kReduceBlock - 1) / kReduceBlock) * ((spec_.n + kReduceBlock - 1) / kReduceBlock)));
  return out;
}

}  // namespace kernelevolve::operators::templates
