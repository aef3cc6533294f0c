// The Triton loop nest's tl.dot main loops (codegen/triton/main_loop_triton.h): which
// reductions take them, and the knobs that reach the printed kernels. Their numerics
// are checked under TRITON_INTERPRET by TritonLoopNestInterpret (integration).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "core/op_graph.h"
#include "operators/codegen/triton/cuda_graph_entry.h"
#include "operators/families/loop_nest/triton_loop_nest_template.h"

namespace kernelevolve {
namespace {

core::OpGraph CaseGraph(const std::string& name) {
  std::ifstream in(std::filesystem::path(KE_TEST_DATA_DIR) / "unit" / "data" / "loop_nest" /
                   (name + ".json"));
  return core::OpGraphFromJson(nlohmann::json::parse(in));
}

std::unique_ptr<operators::templates::KernelTemplate> Match(const std::string& name) {
  auto match = operators::families::MatchTritonLoopNest(CaseGraph(name));
  EXPECT_TRUE(match.tmpl) << name << ": " << match.unsupported;
  return std::move(match.tmpl);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TritonMainLoop, BatchedProductsAndWideConvolutionsRunTlDotTiles) {
  for (const std::string name :
       {"bmm", "bmm_transposed_a", "einsum_heads", "matmul_broadcast", "mm_relu_mm"}) {
    auto t = Match(name);
    const std::string code = t->Generate(t->Drafts().front());
    EXPECT_GE(Count(code, "main loop, matrix product"), name == "mm_relu_mm" ? 2u : 1u) << name;
    EXPECT_NE(code.find("tl.dot(a, b, acc, input_precision=\"tf32x3\")"), std::string::npos)
        << name;
  }
  for (const std::string name :
       {"conv2d_grouped_wide", "conv1d_unbatched_wide", "conv3d_dilated_wide"}) {
    auto t = Match(name);
    const std::string code = t->Generate(t->Drafts().front());
    EXPECT_EQ(Count(code, "main loop, convolution as implicit GEMM"), 1u) << name;
  }
}

TEST(TritonMainLoop, OperandsFromOneBufferAreOneParameter) {
  // q @ k^T where q and k are slices of one in-projection: the product's two operands
  // are one tensor, which Python takes once in the kernel's signature.
  auto t = Match("self_attention_scores");
  const std::string code = t->Generate(t->Drafts().front());
  EXPECT_GE(Count(code, "main loop, matrix product"), 2u) << code;
  for (size_t at = code.find("\ndef _k"); at != std::string::npos; at = code.find("\ndef _k", at + 1)) {
    const size_t open = code.find('(', at), close = code.find(')', open);
    std::vector<std::string> names;
    std::string params = code.substr(open + 1, close - open - 1);
    for (size_t p = 0; p < params.size();) {
      const size_t comma = params.find(',', p);
      std::string name = params.substr(p, comma == std::string::npos ? std::string::npos : comma - p);
      name.erase(0, name.find_first_not_of(' '));
      name = name.substr(0, name.find(':'));
      EXPECT_EQ(std::count(names.begin(), names.end(), name), 0) << name << " twice in\n" << code;
      names.push_back(name);
      p = comma == std::string::npos ? params.size() : comma + 1;
    }
  }
}

TEST(TritonMainLoop, KnobsNoKernelReadsAreLeftOut) {
  // sigmoid(addmm): one main loop with its epilogue fused, so no element-kernel block,
  // no reduction step and no accumulator type (main loops sum in float32).
  auto mm = Match("addmm_sigmoid");
  for (const char* knob : {"block", "block_r", "accumulator"}) {
    EXPECT_EQ(mm->Space().Find(knob), nullptr) << knob;
  }
  EXPECT_NE(mm->Space().Find("block_m"), nullptr);
  // A sum of 54 elements alone (its division is computed by the sum's kernel): block_r,
  // no block.
  auto mean = Match("mean_all");
  EXPECT_NE(mean->Space().Find("block_r"), nullptr);
  EXPECT_EQ(mean->Space().Find("block"), nullptr);
  // A max over 7 elements alone may run as a tile or unrolled, one lane per output
  // (codegen::TritonUnrollsReduction): block_r for the one, block for the other,
  // short_reduction, no accumulator; four distinct drafts, the tile first and the
  // unrolled form second.
  auto amax = Match("amax_keepdim");
  EXPECT_NE(amax->Space().Find("block_r"), nullptr);
  EXPECT_NE(amax->Space().Find("block"), nullptr);
  EXPECT_NE(amax->Space().Find("short_reduction"), nullptr);
  EXPECT_EQ(amax->Space().Find("accumulator"), nullptr);
  const auto drafts = amax->Drafts();
  ASSERT_EQ(drafts.size(), 4u);
  for (size_t a = 0; a < drafts.size(); ++a) {
    for (size_t b = a + 1; b < drafts.size(); ++b) EXPECT_NE(drafts[a], drafts[b]) << a << " " << b;
  }
  EXPECT_EQ(drafts[0].at("short_reduction"), "tile");
  EXPECT_EQ(drafts[1].at("short_reduction"), "unrolled");
  EXPECT_EQ(mean->Space().Find("short_reduction"), nullptr);  // 54 elements
  // Concatenation: element kernels only.
  auto cat = Match("cat");
  EXPECT_NE(cat->Space().Find("block"), nullptr);
  EXPECT_EQ(cat->Space().Find("block_r"), nullptr);
}

TEST(TritonMainLoop, DepthwiseAndNarrowConvolutionsKeepTheReductionTile) {
  for (const std::string name : {"conv2d_depthwise", "conv2d_grouped_strided_padded"}) {
    auto t = Match(name);
    EXPECT_EQ(t->Space().Find("input_precision"), nullptr) << name;
    EXPECT_EQ(t->Generate(t->Drafts().front()).find("tl.dot"), std::string::npos) << name;
  }
}

TEST(TritonMainLoop, TileKnobsReachTheLaunchAndIeeeIsOneOfTheDrafts) {
  auto t = Match("bmm");
  const auto drafts = t->Drafts();
  ASSERT_EQ(drafts.size(), 3u);
  EXPECT_EQ(drafts[0].at("input_precision"), "tf32x3");
  // Fewer 128 x 128 tiles than an H100 has SMs: 64 x 64 with 4 warps first.
  EXPECT_EQ(drafts[0].at("block_m"), 64);
  EXPECT_EQ(drafts[0].at("block_n"), 64);
  EXPECT_EQ(drafts[0].at("num_warps"), 4);
  EXPECT_EQ(drafts[1].at("block_m"), 64);
  // A convolution keeps the 128 x 128 first draft measured on ResNet shapes.
  auto conv = Match("conv2d_grouped_wide");
  EXPECT_EQ(conv->Drafts().front().at("block_m"), 128);
  EXPECT_EQ(conv->Drafts().front().at("num_warps"), 8);
  EXPECT_EQ(drafts[2].at("input_precision"), "ieee");
  nlohmann::json knobs = drafts[2];
  knobs["block_k"] = 16;
  knobs["num_stages"] = 4;
  const std::string code = t->Generate(knobs);
  EXPECT_NE(code.find("BLOCK_K=16, num_warps=4, num_stages=4)"), std::string::npos) << code;
  EXPECT_NE(code.find("input_precision=\"ieee\""), std::string::npos);
}

TEST(TritonMainLoop, PlainTf32IsOfferedOnlyForTheProductsTheReferenceRunsInTf32) {
  auto generate = [](const std::string& name, core::ReferenceTf32 tf32) {
    auto match = operators::families::MatchTritonLoopNest(CaseGraph(name), {}, tf32);
    EXPECT_TRUE(match.tmpl) << match.unsupported;
    const auto& values = match.tmpl->Space().Find("input_precision")->values;
    const bool offered = std::find(values.begin(), values.end(), nlohmann::json("tf32")) != values.end();
    const nlohmann::json first = match.tmpl->Drafts().front();
    return std::make_tuple(offered, first.at("input_precision").get<std::string>(), match.tmpl->Generate(first));
  };
  // PyTorch's defaults: cuDNN convolutions in TF32, matmuls not.
  const core::ReferenceTf32 defaults{false, true};
  auto [conv_offered, conv_first, conv_code] = generate("conv2d_grouped_wide", defaults);
  EXPECT_TRUE(conv_offered);
  EXPECT_EQ(conv_first, "tf32");
  EXPECT_NE(conv_code.find("input_precision=\"tf32\")"), std::string::npos) << conv_code;
  // Operands rounded to the nearest TF32 value as cuDNN's are (tl.dot's tf32 truncates):
  // the entry passes rounded copies, and the loop multiplies them as loaded.
  EXPECT_NE(conv_code.find("acc = tl.dot(w, x, acc, input_precision=\"tf32\")"), std::string::npos) << conv_code;
  EXPECT_NE(conv_code.find("_k3[(2,)](_ke_tf32(t0), _ke_tf32(t1), t2, t5,"), std::string::npos)
      << conv_code;  // the input and the weight; the bias is the epilogue's
  EXPECT_EQ(Count(conv_code, "def _ke_round_tf32(x):"), 1u);
  EXPECT_EQ(Count(conv_code, "def _ke_tf32(t):"), 1u);
  EXPECT_NE(conv_code.find("rounded = ((bits + 0x1000) & 0xFFFFE000).to(tl.float32, bitcast=True)"),
            std::string::npos);
  auto [bmm_offered, bmm_first, bmm_code] = generate("bmm", defaults);
  EXPECT_FALSE(bmm_offered);
  EXPECT_EQ(bmm_first, "tf32x3");
  EXPECT_EQ(bmm_code.find("input_precision=\"tf32\")"), std::string::npos);
  EXPECT_EQ(bmm_code.find("_ke_round_tf32"), std::string::npos);  // no plain TF32 dot: no helper
  // A conv net's head: the convolution's loop takes plain TF32, the Linear's keeps 3xTF32.
  auto [head_offered, head_first, head_code] = generate("conv_flatten_linear", defaults);
  EXPECT_TRUE(head_offered);
  EXPECT_EQ(head_first, "tf32");
  EXPECT_EQ(Count(head_code, "input_precision=\"tf32\")"), 1u) << head_code;
  EXPECT_EQ(Count(head_code, "input_precision=\"tf32x3\")"), 1u) << head_code;
  EXPECT_EQ(Count(head_code, "_ke_tf32(t"), 3u) << head_code;  // its definition and the convolution's operands
  // torch.backends.cuda.matmul.allow_tf32 = True: the Linear's too.
  auto [all_offered, all_first, all_code] = generate("conv_flatten_linear", {true, true});
  EXPECT_EQ(Count(all_code, "input_precision=\"tf32\")"), 2u) << all_code;
  // Neither (e.g. torch.backends.cudnn.allow_tf32 = False in the problem file): no TF32.
  auto [none_offered, none_first, none_code] = generate("conv2d_grouped_wide", {});
  EXPECT_FALSE(none_offered);
  EXPECT_EQ(none_first, "tf32x3");
}

TEST(TritonMainLoop, TheHeaderNamesTheEpilogueItsMainLoopApplies) {
  // The unit_batch cases' consumers read the product at index 0 of a leading size-1 dim.
  for (const std::string name :
       {"addmm_sigmoid", "bmm_unit_batch_residual_relu", "conv2d_unit_batch_sigmoid"}) {
    auto t = Match(name);
    const std::string code = t->Generate(t->Drafts().front());
    EXPECT_NE(code.find("'s main loop)"), std::string::npos) << name << "\n" << code;
    EXPECT_NE(code.find("epilogue, applied to the accumulator tile"), std::string::npos) << name;
  }
}

TEST(TritonLoopNest, TheStepsOfAnUnrolledRecurrenceShareOneCompiledKernelPerForm) {
  // 8 steps x 2 layers of an LSTM: each step's h @ W_hh^T and gate math differ from the
  // other steps' only in their buffers and in the row of the input projection they
  // read, a constant offset that becomes an argument. Triton compiles a form once.
  auto t = Match("lstm_two_layer");
  const std::string code = t->Generate(t->Drafts().front());
  const size_t kernels = Count(code, "@triton.jit");
  // Kernel launches: lines "    _k<id>[grid](...)".
  auto next_launch = [&](size_t from) {
    for (size_t at = code.find("\n    _k", from); at != std::string::npos; at = code.find("\n    _k", at + 1)) {
      if (std::isdigit(static_cast<unsigned char>(code[at + 7])) != 0) return at;
    }
    return std::string::npos;
  };
  size_t launches = 0;
  for (size_t at = next_launch(0); at != std::string::npos; at = next_launch(at + 1)) ++launches;
  EXPECT_GE(launches, 2 * 16u) << "a product and a gate kernel per step and layer";
  EXPECT_LE(kernels, 20u) << code;
  EXPECT_NE(code.find("# also launched for"), std::string::npos) << code;
  // The shared gate kernels take the differing row offsets as integer arguments o<k>.
  EXPECT_NE(code.find(", o"), std::string::npos) << code;
  // Every launched kernel is defined: a launch names its form's kernel.
  for (size_t at = next_launch(0); at != std::string::npos; at = next_launch(at + 1)) {
    const std::string name = code.substr(at + 5, code.find('[', at) - at - 5);
    EXPECT_NE(code.find("def " + name + "("), std::string::npos) << name << " is launched but not defined";
  }
}

TEST(TritonLoopNest, AProgramOfManyLaunchesReplaysThemAsOneCudaGraphPerSetOfBuffers) {
  // The unrolled LSTM launches two kernels per step: launching from Python bounds it.
  auto t = Match("lstm_two_layer");
  const nlohmann::json first = t->Drafts().front();
  ASSERT_TRUE(first.contains("cuda_graph")) << first.dump();
  EXPECT_EQ(first.at("cuda_graph"), "yes");
  const std::string code = t->Generate(first);
  // The launches are one function; the entry captures it per set of buffers and replays.
  EXPECT_NE(code.find("\ndef _ke_launch(inputs, outputs):\n"), std::string::npos) << code;
  EXPECT_NE(code.find("\ndef kernelevolve_entry(inputs, outputs):\n"), std::string::npos) << code;
  EXPECT_NE(code.find("with torch.cuda.graph(graph):"), std::string::npos) << code;
  EXPECT_NE(code.find("graph.replay()"), std::string::npos) << code;
  // The key holds each buffer's address, shape, strides and dtype, so new buffers get a
  // graph of their own; CPU tensors (TRITON_INTERPRET=1) launch directly.
  EXPECT_NE(code.find("t.data_ptr(), tuple(t.shape), t.stride(), t.dtype"), std::string::npos) << code;
  EXPECT_NE(code.find("not all(t.is_cuda for t in buffers)"), std::string::npos) << code;
  // "no" launches from the entry itself, as before the knob.
  nlohmann::json direct = first;
  direct["cuda_graph"] = "no";
  const std::string plain = t->Generate(direct);
  EXPECT_EQ(plain.find("_ke_launch"), std::string::npos);
  EXPECT_EQ(plain.find("torch.cuda.graph"), std::string::npos);
  // The graphs kept hold their own intermediates: fewer of them for larger programs.
  EXPECT_NE(code.find("while len(_ke_graphs) >= 4:"), std::string::npos) << "a small program keeps 4";
  EXPECT_EQ(operators::codegen::CudaGraphsKept(int64_t{1} << 30), 4);
  EXPECT_EQ(operators::codegen::CudaGraphsKept(int64_t{6} << 30), 2);
  EXPECT_EQ(operators::codegen::CudaGraphsKept(int64_t{40} << 30), 1);
  // A program of a few launches is not offered the knob.
  auto small = Match("mm_relu_mm");
  EXPECT_EQ(small->Space().Find("cuda_graph"), nullptr);
}

TEST(TritonLoopNest, TheProductsOfARecurrentLayerFollowCudnnsTf32FlagAndTheMatmulsOwnElsewhere) {
  // Eager PyTorch runs an nn.LSTM whole in cuDNN: under cudnn.allow_tf32 (on by default)
  // its gate GEMMs are TF32, while a plain addmm follows the matmul flag (off).
  const core::ReferenceTf32 defaults{/*matmul=*/false, /*conv=*/true, /*rnn=*/true};
  core::OpGraph graph = CaseGraph("lstm_two_layer");
  auto plain = operators::families::MatchTritonLoopNest(graph, {}, defaults);
  ASSERT_TRUE(plain.tmpl) << plain.unsupported;
  const auto* precision = plain.tmpl->Space().Find("input_precision");
  ASSERT_NE(precision, nullptr);
  EXPECT_EQ(std::count(precision->values.begin(), precision->values.end(), nlohmann::json("tf32")), 0)
      << "products without the cudnn backend follow the matmul flag";
  // The capture marks every node of the layer (graph_capture.py), and the JSON keeps it.
  nlohmann::json doc = core::OpGraphToJson(graph);
  for (auto& node : doc["nodes"]) {
    if (node["kind"] == "call") node["backend"] = "cudnn";
  }
  graph = core::OpGraphFromJson(doc);
  EXPECT_EQ(core::OpGraphToJson(graph), doc);
  auto rnn = operators::families::MatchTritonLoopNest(graph, {}, defaults);
  ASSERT_TRUE(rnn.tmpl) << rnn.unsupported;
  const nlohmann::json first = rnn.tmpl->Drafts().front();
  EXPECT_EQ(first.at("input_precision"), "tf32") << first.dump();
  EXPECT_NE(rnn.tmpl->Generate(first).find("input_precision=\"tf32\""), std::string::npos);
  // With cuDNN's RNN flag off (torch.backends.cudnn.rnn.fp32_precision = "ieee"), the
  // layer's products are float32-accurate again, whatever the convolutions' flag says.
  auto strict = operators::families::MatchTritonLoopNest(graph, {}, core::ReferenceTf32{false, true, false});
  ASSERT_TRUE(strict.tmpl);
  EXPECT_EQ(strict.tmpl->Drafts().front().at("input_precision"), "tf32x3");
}

}  // namespace
}  // namespace kernelevolve
