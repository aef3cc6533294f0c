// Element kernels the Triton loop nest computes inside the reduction they read
// (ir/epilogue_fusion.h, PlanReductionEpilogues): which kernels fuse, which buffers the
// entry still allocates, and what the header says. Their numerics are checked under
// TRITON_INTERPRET by TritonLoopNestInterpret (integration), which runs every case.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "core/op_graph.h"
#include "operators/families/loop_nest/triton_loop_nest_template.h"

namespace kernelevolve {
namespace {

/// The case's Triton program under its first draft, or with `knobs` over it.
std::string Generated(const std::string& name, const nlohmann::json& knobs = nlohmann::json::object()) {
  std::ifstream in(std::filesystem::path(KE_TEST_DATA_DIR) / "unit" / "data" / "loop_nest" / (name + ".json"));
  auto match = operators::families::MatchTritonLoopNest(core::OpGraphFromJson(nlohmann::json::parse(in)));
  EXPECT_TRUE(match.tmpl) << name << ": " << match.unsupported;
  if (!match.tmpl) return "";
  nlohmann::json setting = match.tmpl->Drafts().front();
  setting.update(knobs);
  return match.tmpl->Generate(setting);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// The text of the function that allocates the intermediates and launches the kernels:
/// `_ke_launch` where the entry replays a CUDA graph of it, else `kernelevolve_entry`.
std::string Entry(const std::string& code) {
  size_t at = code.find("def _ke_launch(");
  if (at == std::string::npos) at = code.find("def kernelevolve_entry(");
  const size_t end = code.find("\n\n\n", at);
  return code.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

TEST(TritonReductionEpilogue, MaxPoolingsValueAndIndexAreStoredByTheArgmaxKernel) {
  // max_pool2d with indices lowers to the argmax over each window and two element
  // kernels that read it (the value at the argmax, the index into the input plane):
  // one launch per pooling, and no buffer for the argmax.
  for (const std::string name : {"max_pool2d_indices", "max_pool1d_indices", "max_pool_nan_windows"}) {
    const std::string code = Generated(name);
    const std::string entry = Entry(code);
    // Every launch is an argmax computing one or both of its outputs.
    EXPECT_GE(Count(code, "'s reduction)"), Count(entry, "_k")) << name << "\n" << code;
    EXPECT_EQ(Count(entry, "torch.empty"), 0u) << name << "\n" << entry;
    EXPECT_EQ(Count(code, "res = ("), Count(entry, "_k")) << name << "\n" << code;
  }
}

TEST(TritonReductionEpilogue, ASmallWindowIsWalkedByOneLanePerOutput) {
  // max_pool_nan_windows: max_pool2d(3, stride 2, padding 1) with indices (9 window
  // elements), adaptive_max_pool2d to (3, 2) over 7 x 8 (windows of 3 x 4 = 12) and
  // max_pool1d(5) (5): counts that are not powers of two, so under short_reduction =
  // unrolled each lane walks its window with tl.static_range
  // (codegen::TritonUnrollsReduction) and its accumulators are the result; the fused
  // value and index read them directly. The first draft keeps the tiles.
  const std::string code = Generated("max_pool_nan_windows", {{"short_reduction", "unrolled"}});
  EXPECT_EQ(Count(code, "for r0 in tl.static_range(9):"), 1u) << code;
  EXPECT_EQ(Count(code, "for r0 in tl.static_range(5):"), 1u) << code;
  EXPECT_EQ(Count(code, "res = (accidx).to(tl.int64)"), 3u) << code;
  EXPECT_EQ(Count(code, "tl.arange(0, RBLOCK)"), 0u) << code;
  const std::string tiled = Generated("max_pool_nan_windows");
  EXPECT_EQ(Count(tiled, "tl.static_range"), 0u) << tiled;
  EXPECT_EQ(Count(tiled, "tl.arange(0, RBLOCK)"), 3u) << tiled;
  // A reduction of a power-of-two count has no such knob and keeps the [XBLOCK, RBLOCK]
  // tile: logsumexp over 8.
  const std::string lse = Generated("logsumexp");
  EXPECT_EQ(Count(lse, "short_reduction"), 0u) << lse;
  EXPECT_EQ(Count(lse, "tl.static_range"), 0u) << lse;
  EXPECT_GE(Count(lse, "tl.arange(0, RBLOCK)"), 1u) << lse;
}

TEST(TritonReductionEpilogue, OnlyKernelsReadingTheReductionAtTheirOwnElementFuse) {
  // reduction_epilogues: m = amax(x, 1) is an output and read by m * y + 1 (stored and
  // fused); sum(x, 1) / 3 reshaped to [12] minus y (a consumer of another shape: fused);
  // argmin(x, 1) * 2 + 1 (an int64 consumer: fused); x - mean(x, 1, keepdim): the mean's
  // division is fused into its sum, the broadcast subtraction reads the mean at every
  // element of a row and stays its own kernel, reading the mean's buffer; p = |x|.sum(1)
  // read as p * y (fused) and as x / p[:, None] (broadcast): p keeps its buffer for the
  // division, which stays a kernel of its own.
  const std::string code = Generated("reduction_epilogues");
  const std::string entry = Entry(code);
  EXPECT_EQ(Count(code, "'s reduction)"), 5u) << code;
  EXPECT_EQ(Count(entry, "_k"), 7u) << entry;
  EXPECT_EQ(Count(entry, "torch.empty"), 2u) << entry;  // the mean and p's sum, read broadcast
  // The amax kernel stores both its own output and its consumer's.
  const size_t amax = code.find("<- amax (aten.amax.default)\n@triton.jit");
  ASSERT_NE(amax, std::string::npos) << code;
  const std::string amax_kernel = code.substr(amax, code.find("\n\n\n", amax) - amax);
  EXPECT_EQ(Count(amax_kernel, "tl.store("), 2u) << amax_kernel;
  EXPECT_EQ(Count(amax_kernel, "res, mask=xmask)"), 1u) << amax_kernel;
}

}  // namespace
}  // namespace kernelevolve
