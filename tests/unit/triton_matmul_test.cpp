// The triton_matmul template (issue 6): graph matching of matmul + epilogue graphs as
// the worker captures them, and the generated Triton source. Running the source is
// tests/integration/triton_interpret_test.cpp (TRITON_INTERPRET=1) and the GPU script.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli/gpu_target.h"
#include "core/error.h"
#include "operators/template/triton_matmul.h"
#include "operators/template/triton_softmax.h"

namespace kernelevolve::operators::templates {
namespace {

using nlohmann::json;

json Placeholder(const std::string& name, int abi, std::vector<int64_t> shape,
                 const std::string& dtype) {
  return {{"name", name},
          {"kind", "placeholder"},
          {"abi_index", abi},
          {"shape", shape},
          {"dtype", dtype}};
}

json Call(const std::string& name, const std::string& target, json args, std::vector<int64_t> shape,
          const std::string& dtype) {
  return {{"name", name},   {"kind", "call"}, {"target", target}, {"args", std::move(args)},
          {"shape", shape}, {"dtype", dtype}};
}

json R(const std::string& name, const std::string& node) { return {{"name", name}, {"ref", node}}; }
json V(const std::string& name, json value) {
  return {{"name", name}, {"value", std::move(value)}};
}

core::Problem ProblemOf(json nodes, const std::string& out) {
  core::Problem p;
  p.graph = core::OpGraphFromJson({{"nodes", std::move(nodes)}, {"outputs", {out}}});
  return p;
}

// gelu(a @ b + bias), as captured from problems/gpu_gemm/matmul_bias_gelu.py (M=64, N=48, K=32).
core::Problem BiasGelu(const std::string& dtype = "float16") {
  return ProblemOf(
      {Placeholder("a", 0, {64, 32}, dtype), Placeholder("b", 1, {32, 48}, dtype),
       Placeholder("bias", 2, {48}, dtype),
       Call("mm", "aten.mm.default", {R("self", "a"), R("mat2", "b")}, {64, 48}, dtype),
       Call("add", "aten.add.Tensor", {R("self", "mm"), R("other", "bias"), V("alpha", 1)},
            {64, 48}, dtype),
       Call("gelu", "aten.gelu.default", {R("self", "add"), V("approximate", "none")}, {64, 48},
            dtype)},
      "gelu");
}

// relu(linear(x, w, bias)): t + addmm, as captured from matmul_bias_relu.py.
core::Problem LinearRelu() {
  const std::string bf = "bfloat16";
  return ProblemOf(
      {Placeholder("x", 0, {64, 32}, bf), Placeholder("w", 1, {48, 32}, bf),
       Placeholder("bias", 2, {48}, bf),
       Call("t", "aten.t.default", {R("self", "w")}, {32, 48}, bf),
       Call("addmm", "aten.addmm.default",
            {R("self", "bias"), R("mat1", "x"), R("mat2", "t"), V("beta", 1), V("alpha", 1)},
            {64, 48}, bf),
       Call("relu", "aten.relu.default", {R("self", "addmm")}, {64, 48}, bf)},
      "relu");
}

TEST(TritonMatmul, MatchesMatmulBiasGelu) {
  auto match = MatchTritonMatmul(BiasGelu().graph);
  ASSERT_TRUE(match.has_value());
  ASSERT_TRUE(match->spec) << match->unsupported;
  const TritonMatmulSpec& s = *match->spec;
  EXPECT_EQ(s.m, 64);
  EXPECT_EQ(s.n, 48);
  EXPECT_EQ(s.k, 32);
  EXPECT_EQ(s.a.abi_index, 0);
  EXPECT_FALSE(s.a.transposed);
  EXPECT_EQ(s.b.abi_index, 1);
  EXPECT_EQ(s.dtype, core::DType::kFloat16);
  EXPECT_EQ(s.out_dtype, core::DType::kFloat16);
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].abi_index, 2);
  EXPECT_EQ(s.inputs[0].broadcast, EpilogueBroadcast::kRow);
  ASSERT_EQ(s.lines.size(), 2u);
  EXPECT_EQ(s.lines[0], "t0 = acc + e0  # aten.add.Tensor");
  EXPECT_EQ(s.lines[1].rfind("t1 = 0.5 * t0 * (1.0 + tl.math.erf(t0 * 0.70710677))", 0), 0u)
      << s.lines[1];
  EXPECT_EQ(s.result_var, "t1");
}

TEST(TritonMatmul, FoldsLinearTransposeAndAddmmBias) {
  auto match = MatchTritonMatmul(LinearRelu().graph);
  ASSERT_TRUE(match && match->spec) << (match ? match->unsupported : "no match");
  const TritonMatmulSpec& s = *match->spec;
  EXPECT_EQ(s.b.abi_index, 1);
  EXPECT_TRUE(s.b.transposed);
  EXPECT_EQ(s.dtype, core::DType::kBFloat16);
  EXPECT_EQ(s.lines[0], "t0 = acc + e0  # aten.addmm.default bias");
  const std::string src = TritonMatmulTemplate(s).Generate(json::object());
  // B = w^T over w [N=48, K=32] contiguous: stride 1 along K, K along N.
  EXPECT_NE(src.find("STRIDE_AM=32, STRIDE_AK=1, STRIDE_BK=1, STRIDE_BN=32"), std::string::npos)
      << src;
}

TEST(TritonMatmul, AddmmScalesAndScaleResidualChain) {
  const std::string h = "float16";
  core::Problem p = ProblemOf(
      {Placeholder("a", 0, {16, 16}, h), Placeholder("b", 1, {16, 16}, h),
       Placeholder("r", 2, {16, 16}, h), Placeholder("c", 3, {16, 1}, h),
       Call("addmm", "aten.addmm.default",
            {R("self", "c"), R("mat1", "a"), R("mat2", "b"), V("beta", 2.0), V("alpha", 0.5)},
            {16, 16}, h),
       Call("mul", "aten.mul.Tensor", {R("self", "addmm"), V("other", 0.25)}, {16, 16}, h),
       Call("add", "aten.add.Tensor", {R("self", "mul"), R("other", "r"), V("alpha", 1)}, {16, 16},
            h)},
      "add");
  auto match = MatchTritonMatmul(p.graph);
  ASSERT_TRUE(match && match->spec) << match->unsupported;
  const auto& s = *match->spec;
  ASSERT_EQ(s.inputs.size(), 2u);
  EXPECT_EQ(s.inputs[0].broadcast, EpilogueBroadcast::kColumn);
  EXPECT_EQ(s.inputs[1].broadcast, EpilogueBroadcast::kFull);
  EXPECT_EQ(s.lines[0], "t0 = acc * 0.5 + e0 * 2.0  # aten.addmm.default bias");
  EXPECT_EQ(s.lines[1], "t1 = t0 * 0.25  # aten.mul.Tensor");
  EXPECT_EQ(s.lines[2], "t2 = t1 + e1  # aten.add.Tensor");
  const std::string src = TritonMatmulTemplate(s).Generate(json::object());
  EXPECT_NE(src.find("e0 = tl.load(e0_ptr + offs_m[:, None], mask=offs_m[:, None] < M, "
                     "other=0.0).to(tl.float32)"),
            std::string::npos)
      << src;
  EXPECT_NE(
      src.find(
          "e1 = tl.load(e1_ptr + rows * N + offs_n[None, :], mask=mask, other=0.0).to(tl.float32)"),
      std::string::npos);
  EXPECT_NE(
      src.find("_matmul_epilogue[(1,)](inputs[0], inputs[1], inputs[3], inputs[2], outputs[0],"),
      std::string::npos);
}

TEST(TritonMatmul, GeneratesTheTiledKernel) {
  auto match = MatchTritonTemplate(BiasGelu());
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "triton_matmul");
  const auto drafts = match.tmpl->Drafts();
  ASSERT_EQ(drafts.size(), 4u);
  EXPECT_EQ(drafts[0], (json{{"block_m", 128},
                             {"block_n", 256},
                             {"block_k", 64},
                             {"group_m", 8},
                             {"num_stages", 3},
                             {"num_warps", 8}}));
  for (const auto& d : drafts) EXPECT_TRUE(match.tmpl->Space().IsValid(d)) << d.dump();
  const std::string src = match.tmpl->Generate(drafts[1]);
  EXPECT_NE(src.find("@triton.jit\ndef _matmul_epilogue(a_ptr, b_ptr, e0_ptr, c_ptr,"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("group_size_m = min(num_pid_m - first_pid_m, GROUP_M)"), std::string::npos);
  EXPECT_NE(src.find("acc = tl.dot(a, b, acc)\n"), std::string::npos);
  EXPECT_NE(src.find("b = tl.load(b_ptrs, mask=offs_k[:, None] < k_left, other=0.0)"),
            std::string::npos);  // K 32 < BLOCK_K 64
  EXPECT_NE(
      match.tmpl->Generate(drafts[2]).find("a = tl.load(a_ptrs)\n        b = tl.load(b_ptrs)\n"),
      std::string::npos);  // BLOCK_K 32 divides K
  EXPECT_NE(
      src.find(
          "tl.store(c_ptr + rows * N + offs_n[None, :], t1.to(c_ptr.dtype.element_ty), mask=mask)"),
      std::string::npos);
  EXPECT_NE(src.find("_matmul_epilogue[(1,)](inputs[0], inputs[1], inputs[2], outputs[0],"),
            std::string::npos);
  EXPECT_NE(src.find("BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8,\n"), std::string::npos);
  EXPECT_NE(src.find("num_stages=4, num_warps=4)"), std::string::npos);
  EXPECT_NE(
      match.tmpl->Summary(drafts[0]).find("Triton matmul 64x48x32 float16 + epilogue "
                                          "[aten.add.Tensor, aten.gelu.default], 128x256x64 tiles"),
      std::string::npos)
      << match.tmpl->Summary(drafts[0]);
  EXPECT_THROW(match.tmpl->Generate({{"block_m", 96}}), core::InvalidInputError);
}

TEST(TritonMatmul, AFewTilesWithALongDepthGetASplitKDraftThatFillsTheGpu) {
  // problems/matmul/mm_large_k at GPU sizes: 16 output tiles of 128 x 128 over a depth of
  // 131072 ran at 0.09x eager on an H100 with one program per tile (2026-12-06).
  core::Problem p = ProblemOf({Placeholder("a", 0, {512, 131072}, "float32"),
                               Placeholder("b", 1, {131072, 512}, "float32"),
                               Call("mm", "aten.mm.default", {R("self", "a"), R("mat2", "b")}, {512, 512}, "float32")},
                              "mm");
  auto match = MatchTritonTemplate(p);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  const KnobDim* split = match.tmpl->Space().Find("split_k");
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->values, (std::vector<json>{1, 2, 4, 8, 16, 32}));
  const auto drafts = match.tmpl->Drafts();
  ASSERT_FALSE(drafts.empty());
  EXPECT_EQ(drafts[0].at("split_k"), 8);  // 16 tiles x 8 slices: 128 programs for 132 SMs
  EXPECT_EQ(drafts[0].at("input_precision"), "tf32x3");
  EXPECT_EQ(drafts[1].at("split_k"), 1);  // then the one-pass drafts as before
  const std::string src = match.tmpl->Generate(drafts[0]);
  EXPECT_NE(src.find("import torch\n"), std::string::npos) << src;
  EXPECT_NE(src.find("    k_end = tl.minimum(k_first + TILES_PER_SPLIT, K_TILES)\n"), std::string::npos) << src;
  EXPECT_NE(src.find("    for kk in tl.range(k_first, k_end):\n"), std::string::npos);
  EXPECT_NE(src.find("offs_k[None, :] * STRIDE_AK + k_first * BLOCK_K * STRIDE_AK\n"), std::string::npos);
  EXPECT_NE(src.find("tl.store(ws_ptr + pid_k * M * N + rows * N + offs_n[None, :], acc, mask=mask)"),
            std::string::npos);
  EXPECT_NE(src.find("    for s in tl.static_range(SPLIT_K):\n"), std::string::npos);
  EXPECT_NE(src.find("ws = torch.empty((8, 512, 512), dtype=torch.float32, device=outputs[0].device)"),
            std::string::npos);
  EXPECT_NE(src.find("_matmul_split_k[(16, 8)](inputs[0], inputs[1], ws,"), std::string::npos);
  EXPECT_NE(src.find("K_TILES=4096, TILES_PER_SPLIT=512,"), std::string::npos);
  EXPECT_NE(src.find("_matmul_split_k_epilogue[(64,)](ws, outputs[0], M=512, N=512, SPLIT_K=8,"),
            std::string::npos);
  EXPECT_NE(match.tmpl->Summary(drafts[0]).find("K split 8 ways"), std::string::npos)
      << match.tmpl->Summary(drafts[0]);
  // 32 slices of 32 K tiles of 128.
  EXPECT_NE(match.tmpl->Generate(json{{"split_k", 32}, {"block_k", 128}}).find("TILES_PER_SPLIT=32,"),
            std::string::npos);
}

TEST(TritonMatmul, AShortDepthHasNoSplitKKnob) {
  auto match = MatchTritonTemplate(BiasGelu());  // K = 32
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Space().Find("split_k"), nullptr);
  EXPECT_EQ(match.tmpl->Generate(match.tmpl->Drafts()[0]).find("split_k"), std::string::npos);
}

TEST(TritonMatmul, MasksARaggedKAndKeepsFloat32Exact) {
  core::Problem p = ProblemOf(
      {Placeholder("a", 0, {8, 40}, "float32"), Placeholder("b", 1, {40, 8}, "float32"),
       Call("mm", "aten.mm.default", {R("self", "a"), R("mat2", "b")}, {8, 8}, "float32")},
      "mm");
  auto match = MatchTritonTemplate(p);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  const std::string src = match.tmpl->Generate({{"block_k", 32}});
  EXPECT_NE(src.find("a = tl.load(a_ptrs, mask=offs_k[None, :] < k_left, other=0.0)"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("K_TILES=2,"), std::string::npos);
  EXPECT_NE(src.find("input_precision=\"ieee\""), std::string::npos);
  EXPECT_NE(src.find("tl.store(c_ptr + rows * N + offs_n[None, :], acc.to("), std::string::npos);
}

TEST(TritonMatmul, Float32TakesPlainTf32OnlyWhenTheReferenceDoes) {
  core::Problem p = ProblemOf(
      {Placeholder("a", 0, {64, 64}, "float32"), Placeholder("b", 1, {64, 64}, "float32"),
       Call("mm", "aten.mm.default", {R("self", "a"), R("mat2", "b")}, {64, 64}, "float32")},
      "mm");
  p.reference_tf32.conv = true;  // PyTorch's defaults: convolutions in TF32, matmuls not
  p.eager_error_multiple = 8;    // the default: tolerances that follow eager's own error
  auto strict = MatchTritonTemplate(p);
  ASSERT_TRUE(strict.tmpl) << strict.unsupported;
  const auto& values = strict.tmpl->Space().Find("input_precision")->values;
  EXPECT_EQ(std::count(values.begin(), values.end(), nlohmann::json("tf32")), 0);
  EXPECT_EQ(strict.tmpl->Drafts().front().at("input_precision"), "tf32x3");
  p.reference_tf32.matmul = true;  // torch.backends.cuda.matmul.allow_tf32 = True
  auto tf32 = MatchTritonTemplate(p);
  ASSERT_TRUE(tf32.tmpl) << tf32.unsupported;
  const auto drafts = tf32.tmpl->Drafts();
  EXPECT_EQ(drafts[0].at("input_precision"), "tf32");
  EXPECT_EQ(drafts[1].at("input_precision"), "tf32x3");
  const std::string code = tf32.tmpl->Generate(drafts[0]);
  EXPECT_NE(code.find("acc = tl.dot(a, b, acc, input_precision=\"tf32\")"), std::string::npos) << code;
  EXPECT_NE(code.find("_matmul_epilogue[(1,)](_ke_tf32(inputs[0]), _ke_tf32(inputs[1]), outputs[0],"),
            std::string::npos)
      << code;  // operands rounded to TF32 by the entry, as cuBLAS rounds them
  EXPECT_NE(code.find("def _ke_round_tf32(x):"), std::string::npos);
  EXPECT_EQ(tf32.tmpl->Generate(drafts[1]).find("_ke_tf32"), std::string::npos);  // tf32x3 rounds itself
  p.eager_error_multiple = 0;  // EAGER_ERROR_MULTIPLE = 0: float32 tolerances, so no plain TF32 even under allow_tf32
  auto off = MatchTritonTemplate(p);
  ASSERT_TRUE(off.tmpl) << off.unsupported;
  EXPECT_EQ(off.tmpl->Drafts().front().at("input_precision"), "tf32x3");
}

TEST(TritonMatmul, RefusesWhatItCannotFuse) {
  const std::string h = "float16";
  // A prologue op on an operand.
  auto relu_first = MatchTritonMatmul(
      ProblemOf({Placeholder("a", 0, {8, 8}, h), Placeholder("b", 1, {8, 8}, h),
                 Call("r", "aten.relu.default", {R("self", "a")}, {8, 8}, h),
                 Call("mm", "aten.mm.default", {R("self", "r"), R("mat2", "b")}, {8, 8}, h)},
                "mm")
          .graph);
  ASSERT_TRUE(relu_first && !relu_first->spec);
  EXPECT_NE(relu_first->unsupported.find("prologue ops are not fused"), std::string::npos)
      << relu_first->unsupported;
  // A reduction after the matmul.
  auto sum_after = MatchTritonTemplate(
      ProblemOf({Placeholder("a", 0, {8, 8}, h), Placeholder("b", 1, {8, 8}, h),
                 Call("mm", "aten.mm.default", {R("self", "a"), R("mat2", "b")}, {8, 8}, h),
                 Call("s", "aten.sum.dim_IntList",
                      {R("self", "mm"), V("dim", {1}), V("keepdim", false)}, {8}, h)},
                "s"));
  // The matmul family refuses it; the loop nest takes it, float16 as storage (read
  // widened to float32, each op's result rounded to float16).
  ASSERT_TRUE(sum_after.tmpl) << sum_after.unsupported;
  EXPECT_EQ(sum_after.tmpl->Name(), "triton_loop_nest");
  EXPECT_NE(sum_after.tmpl->Generate(sum_after.tmpl->Drafts().front()).find(".to(tl.float16)"), std::string::npos);
  // Batched matmul.
  auto bmm = MatchTritonMatmul(
      ProblemOf({Placeholder("a", 0, {2, 8, 8}, h), Placeholder("b", 1, {2, 8, 8}, h),
                 Call("o", "aten.bmm.default", {R("self", "a"), R("mat2", "b")}, {2, 8, 8}, h)},
                "o")
          .graph);
  ASSERT_TRUE(bmm && !bmm->spec);
  EXPECT_NE(bmm->unsupported.find("2-D only"), std::string::npos);
  // No matmul at all: another template decides.
  EXPECT_FALSE(
      MatchTritonMatmul(ProblemOf({Placeholder("x", 0, {8}, h),
                                   Call("r", "aten.relu.default", {R("self", "x")}, {8}, h)},
                                  "r")
                            .graph));
}

TEST(TritonMatmul, CpuTargetGetsALoopNest) {
  // No CPU matmul family yet: the graph compiles as a loop-nest program (mm as a
  // reduction over k, the epilogue inlined into the output kernel).
  auto match = MatchTemplateForTarget("cpu", BiasGelu("float32"), 1);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "loop_nest");
}

TEST(TritonMatmul, RooflinePeakFollowsTheOutputDtype) {
  core::Problem p;
  core::TensorSpec out;
  for (auto [dtype, expected] : {std::pair{core::DType::kFloat16, "float16"}, {core::DType::kBFloat16, "bfloat16"},
                                 {core::DType::kFloat32, "tf32"}, {core::DType::kInt64, "tf32"}}) {
    out.dtype = dtype;
    p.outputs = {out};
    EXPECT_EQ(cli::PeakDtype(p), expected);
  }
  p.outputs.clear();
  EXPECT_EQ(cli::PeakDtype(p), "tf32");
}

}  // namespace
}  // namespace kernelevolve::operators::templates
