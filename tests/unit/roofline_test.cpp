// Roofline math (eval/roofline.h): compulsory bytes, FLOP counts of small graphs, bound
// and fraction against given machine peaks.
#include <gtest/gtest.h>

#include "eval/roofline.h"
#include "template_test_util.h"

namespace kernelevolve {
namespace {

using template_test::GraphBuilder;
using template_test::Ref;
using template_test::Val;

/// Appends a placeholder (empty target) or a call of `shape` to `graph`.
void AddNode(core::OpGraph& graph, const std::string& name, const std::string& target, std::vector<int64_t> shape,
             std::vector<core::OpArg> args) {
  core::OpNode n;
  n.name = name;
  n.target = target;
  n.kind = target.empty() ? core::OpNodeKind::kPlaceholder : core::OpNodeKind::kCall;
  n.shape = std::move(shape);
  n.args = std::move(args);
  graph.nodes.push_back(n);
}

TEST(Roofline, UnaryElementwiseCountsOneFlopPerElementAndInputPlusOutputBytes) {
  GraphBuilder g({256, 1024});
  g.Input("x");
  g.Call("y", "aten.gelu.default", {Ref("self", "x"), Val("approximate", "none")});
  const core::Problem p = g.Finish("y");
  const eval::WorkEstimate work = eval::EstimateWork(p);
  EXPECT_EQ(work.bytes, 2 * 256 * 1024 * 4);  // float32 in + out
  EXPECT_DOUBLE_EQ(work.flops, 256.0 * 1024);  // gelu is transcendental, still one
  EXPECT_TRUE(work.assumed_ops.empty());
}

TEST(Roofline, ChainsSumTheirOpsAndViewsAreFree) {
  GraphBuilder g({100});
  g.Input("x");
  g.Input("w");
  g.Call("a", "aten.mul.Tensor", {Ref("self", "x"), Ref("other", "w")});
  g.Call("v", "aten.view.default", {Ref("self", "a"), Val("size", {100})});
  g.Call("s", "aten.sigmoid.default", {Ref("self", "v")});
  g.Call("o", "aten.mul.Tensor", {Ref("self", "s"), Ref("other", "x")});
  const core::Problem p = g.Finish("o");
  const eval::WorkEstimate work = eval::EstimateWork(p);
  EXPECT_EQ(work.bytes, 3 * 100 * 4);  // two inputs and one output, intermediates not counted
  EXPECT_DOUBLE_EQ(work.flops, 300);   // mul, sigmoid, mul; view 0
}

TEST(Roofline, ReductionsSoftmaxAndMatmul) {
  core::OpGraph graph;
  auto node = [&](const std::string& name, const std::string& target, std::vector<int64_t> shape,
                  std::vector<core::OpArg> args) { AddNode(graph, name, target, std::move(shape), std::move(args)); };
  node("x", "", {8, 64}, {});
  node("w", "", {64, 32}, {});
  node("sum", "aten.sum.dim_IntList", {8}, {Ref("self", "x")});               // 512
  node("sm", "aten._softmax.default", {8, 64}, {Ref("self", "x")});           // 5 * 512
  node("mm", "aten.mm.default", {8, 32}, {Ref("self", "x"), Ref("mat2", "w")});  // 2*8*32*64
  node("b", "", {32}, {});
  node("am", "aten.addmm.default", {8, 32}, {Ref("self", "b"), Ref("mat1", "x"), Ref("mat2", "w")});
  node("cs", "aten.cumsum.default", {8, 64}, {Ref("self", "x")});             // unknown: 512
  std::vector<std::string> assumed;
  const double flops = eval::EstimateFlops(graph, &assumed);
  EXPECT_DOUBLE_EQ(flops, 512 + 5 * 512 + 2 * (2.0 * 8 * 32 * 64) + 512);
  EXPECT_EQ(assumed, std::vector<std::string>{"aten.cumsum"});
}

TEST(Roofline, ConvolutionAttentionPoolingAndMatrixVector) {
  core::OpGraph graph;
  auto node = [&](const std::string& name, const std::string& target, std::vector<int64_t> shape,
                  std::vector<core::OpArg> args) { AddNode(graph, name, target, std::move(shape), std::move(args)); };
  // conv2d, groups 2: x [2, 4, 10, 10], w [8, 2, 3, 3] -> y [2, 8, 8, 8]: 2 * 1024 * 18.
  node("x", "", {2, 4, 10, 10}, {});
  node("w", "", {8, 2, 3, 3}, {});
  node("conv", "aten.convolution.default", {2, 8, 8, 8},
       {Ref("input", "x"), Ref("weight", "w"), Val("transposed", false), Val("groups", 2)});
  // transposed: x [2, 4, 10, 10], w [4, 3, 2, 2] (Cin, Cout, k): 2 * 800 * 12.
  node("wt", "", {4, 3, 2, 2}, {});
  node("convt", "aten.convolution.default", {2, 3, 20, 20},
       {Ref("input", "x"), Ref("weight", "wt"), Val("transposed", true), Val("groups", 1)});
  // attention, q [1, 2, 16, 8], k [1, 2, 32, 8]: 4 * 256 * 32; causal half of it.
  node("q", "", {1, 2, 16, 8}, {});
  node("k", "", {1, 2, 32, 8}, {});
  const char* sdpa = "aten._scaled_dot_product_flash_attention_for_cpu.default";
  node("att", sdpa, {1, 2, 16, 8}, {Ref("query", "q"), Ref("key", "k"), Ref("value", "k"), Val("is_causal", false)});
  node("attc", sdpa, {1, 2, 16, 8}, {Ref("query", "q"), Ref("key", "k"), Ref("value", "k"), Val("is_causal", true)});
  node("item", "getitem", {1, 2, 16, 8}, {Ref("self", "att"), Val("index", 0)});  // free
  // max pooling 3 x 3 to [2, 4, 4, 4]: 128 * 9; mv [6, 5] x [5]: 2 * 6 * 5.
  node("pool", "aten.max_pool2d_with_indices.default", {2, 4, 4, 4},
       {Ref("self", "x"), Val("kernel_size", std::vector<int>{3, 3})});
  node("m", "", {6, 5}, {});
  node("vec", "", {5}, {});
  node("mv", "aten.mv.default", {6}, {Ref("self", "m"), Ref("vec", "vec")});
  std::vector<std::string> assumed;
  const double flops = eval::EstimateFlops(graph, &assumed);
  EXPECT_DOUBLE_EQ(flops, 2.0 * 1024 * 18 + 2.0 * 800 * 12 + 4.0 * 256 * 32 + 2.0 * 256 * 32 + 128.0 * 9 + 2.0 * 30);
  EXPECT_TRUE(assumed.empty()) << assumed.front();
}

TEST(Roofline, MemoryBoundFractionOfCopyBandwidth) {
  eval::WorkEstimate work;
  work.bytes = 8'000'000;  // 8 MB per call
  work.flops = 1'000'000;  // intensity 0.125 FLOP/byte
  const eval::MachinePeaks peaks{20.0, 200.0};  // balance 10 FLOP/byte
  EXPECT_DOUBLE_EQ(eval::MachineBalance(peaks), 10.0);
  const core::RooflineFigures r = eval::ComputeRoofline(work, 1e-3, peaks);  // 1 ms per call
  EXPECT_EQ(r.bound, "memory");
  EXPECT_DOUBLE_EQ(r.achieved_gbps, 8.0);
  EXPECT_DOUBLE_EQ(r.achieved_gflops, 1.0);
  EXPECT_DOUBLE_EQ(r.arithmetic_intensity, 0.125);
  EXPECT_DOUBLE_EQ(r.fraction, 0.4);
  EXPECT_EQ(eval::RooflineShort(r), "40% of copy bw");
}

TEST(Roofline, ComputeBoundFractionOfPeakAndUnknownCases) {
  eval::WorkEstimate work;
  work.bytes = 1'000'000;
  work.flops = 100'000'000;  // 100 FLOP/byte
  const core::RooflineFigures r = eval::ComputeRoofline(work, 1e-2, {20.0, 200.0});
  EXPECT_EQ(r.bound, "compute");
  EXPECT_DOUBLE_EQ(r.achieved_gflops, 10.0);
  EXPECT_DOUBLE_EQ(r.fraction, 0.05);
  // FLOP peak unknown: the fallback balance decides, and a compute-bound fraction is 0.
  EXPECT_EQ(eval::ComputeRoofline(work, 1e-2, {20.0, 0}).bound, "compute");
  EXPECT_DOUBLE_EQ(eval::ComputeRoofline(work, 1e-2, {20.0, 0}).fraction, 0);
  // Bandwidth unknown, or no time: achieved figures only / nothing.
  const core::RooflineFigures no_bw = eval::ComputeRoofline(work, 1e-2, {0, 0});
  EXPECT_EQ(no_bw.bound, "unknown");
  EXPECT_DOUBLE_EQ(no_bw.achieved_gbps, 0.1);
  EXPECT_FALSE(eval::ComputeRoofline(work, 0, {20.0, 200.0}).Known());
  EXPECT_EQ(eval::RooflineShort(no_bw), "-");
  const nlohmann::json doc = eval::RooflineToJson(r);
  EXPECT_EQ(doc["bound"], "compute");
  EXPECT_DOUBLE_EQ(doc["fraction"].get<double>(), 0.05);
}

}  // namespace
}  // namespace kernelevolve
