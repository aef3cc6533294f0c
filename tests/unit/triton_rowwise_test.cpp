// The triton_rowwise and triton_scan templates: knob spaces, drafts and generated
// text for captured graphs (tests/unit/data/rowwise) and hand-built scans, and the
// template choice of MatchTritonTemplate. Running the generated kernels is
// tests/integration/triton_rowwise_interpret_test.cpp.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "core/op_graph.h"
#include "operators/template/triton_rowwise.h"
#include "operators/template/triton_scan.h"
#include "operators/template/triton_softmax.h"
#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

namespace templates = operators::templates;
using templates::MatchTritonTemplate;

const std::filesystem::path kCases =
    std::filesystem::path(KE_TEST_DATA_DIR) / "unit" / "data" / "rowwise";

core::Problem CaseProblem(const std::string& name) {
  std::ifstream in(kCases / (name + ".json"));
  core::Problem p;
  p.name = name;
  p.graph = core::OpGraphFromJson(nlohmann::json::parse(in));
  return p;
}

std::vector<nlohmann::json> Values(const templates::KnobSpace& space, const std::string& dim) {
  const auto* d = space.Find(dim);
  return d == nullptr ? std::vector<nlohmann::json>{} : d->values;
}

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TritonRowwise, EveryCapturedCaseGetsTheRowwiseTemplateAndGenerates) {
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kCases)) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    const auto match = MatchTritonTemplate(CaseProblem(name));
    ASSERT_TRUE(match.tmpl) << match.unsupported;
    EXPECT_EQ(match.tmpl->Name(), "triton_rowwise");
    const auto drafts = match.tmpl->Drafts();
    ASSERT_GE(drafts.size(), 1u);
    for (const auto& knobs : drafts) {
      EXPECT_EQ(knobs, match.tmpl->Space().Canonical(knobs));
      const std::string src = match.tmpl->Generate(knobs);
      EXPECT_TRUE(Has(src, "def kernelevolve_entry(inputs, outputs):"));
      EXPECT_TRUE(Has(src, "@triton.jit"));
    }
    ++cases;
  }
  EXPECT_GE(cases, 20);
}

TEST(TritonRowwise, MiddleDimReductionUsesColumnBlocks) {
  const auto match = MatchTritonTemplate(CaseProblem("sum_mid_dim"));  // [6, 37, 5] over dim 1
  ASSERT_TRUE(match.tmpl);
  const auto& space = match.tmpl->Space();
  EXPECT_EQ(Values(space, "layout"), std::vector<nlohmann::json>{"columns"});
  EXPECT_EQ(Values(space, "pass"), (std::vector<nlohmann::json>{"single", "looped"}));
  EXPECT_EQ(Values(space, "block_i"), std::vector<nlohmann::json>{16});  // I = 5: one block
  EXPECT_EQ(space.Find("accumulator")->safe_value, "float64");
  const std::string src = match.tmpl->Generate({{"pass", "looped"}, {"block_r", 8}});
  EXPECT_TRUE(Has(src, "i = (pid % 1) * BI + tl.arange(0, BI)[None, :]"));
  EXPECT_TRUE(Has(src, "for r0 in tl.range(0, 37, BR, num_stages=NS):"));
  EXPECT_TRUE(Has(src, "tl.load(in0 + (((o * 37 + r) * 5 + i)), mask=(rmask) & (imask), other=0)"));
  EXPECT_TRUE(Has(src, "_rowwise[(6,)](inputs[0], outputs[0], BQ=1, BR=8, BI=16"));
}

TEST(TritonRowwise, CrossEntropyReducesRowsThenATailKernel) {
  const auto match = MatchTritonTemplate(CaseProblem("cross_entropy"));  // [16, 11] int64 targets
  ASSERT_TRUE(match.tmpl);
  EXPECT_EQ(Values(match.tmpl->Space(), "layout"), (std::vector<nlohmann::json>{"rows", "split"}));
  const std::string src = match.tmpl->Generate(match.tmpl->Drafts().front());
  EXPECT_TRUE(Has(src, "def _tail("));
  EXPECT_TRUE(Has(src, "torch.empty(16, dtype=torch.float32, device=dev)"));  // a row buffer
  EXPECT_TRUE(Has(src, "_tail[(1,)]("));
  EXPECT_TRUE(Has(src, "tl.load(in1 + "));  // the targets, indexed by row
  // Split rows: partials, then a combine kernel per stage.
  const std::string split = match.tmpl->Generate({{"layout", "split"}, {"programs_per_row", 4}});
  EXPECT_TRUE(Has(split, "def _split_stage0("));
  EXPECT_TRUE(Has(split, "def _split_combine2("));
  EXPECT_TRUE(Has(split, "_split_stage0[(16, 4)]("));
}

TEST(TritonRowwise, FullReductionIsSplitIntoDeterministicPartials) {
  const auto match = MatchTritonTemplate(CaseProblem("full_sum_chunks"));  // [1, 15000, 1]
  ASSERT_TRUE(match.tmpl);
  EXPECT_EQ(Values(match.tmpl->Space(), "layout"), std::vector<nlohmann::json>{"split"});
  EXPECT_EQ(match.tmpl->Space().Find("pass"), nullptr);
  const auto drafts = match.tmpl->Drafts();
  ASSERT_GE(drafts.size(), 2u);
  EXPECT_EQ(drafts.front().at("accumulator"), "float32");
  // The float64 twin of the first draft comes second (the `large` edge set needs it).
  nlohmann::json twin = drafts.front();
  twin["accumulator"] = "float64";
  EXPECT_EQ(drafts.at(1), twin);
  const std::string src = match.tmpl->Generate(drafts.at(1));
  EXPECT_TRUE(Has(src, "part = torch.empty(4, dtype=torch.float64, device=dev)"));
  EXPECT_TRUE(Has(src, "q = tl.arange(0, NPB)"));
  EXPECT_FALSE(Has(src, "def _rowwise("));
  EXPECT_FALSE(Has(src, "atomic"));
}

TEST(TritonRowwise, ArgminWritesInt64AndShortRowsShareAProgram) {
  const auto match = MatchTritonTemplate(CaseProblem("argmin_last"));  // [7, 45]
  ASSERT_TRUE(match.tmpl);
  EXPECT_EQ(match.tmpl->Space().Find("accumulator"), nullptr);  // max / min only
  const nlohmann::json knobs = {{"pass", "single"}, {"block_rows", 4}};
  const std::string src = match.tmpl->Generate(knobs);
  EXPECT_TRUE(Has(src, ".to(tl.int64)"));
  EXPECT_TRUE(Has(src, "tl.min("));
  EXPECT_TRUE(Has(src, "_rowwise[(2,)](inputs[0], outputs[0], BQ=4, BR=64"));
  // Rows per program stop where the padded rows outgrow the tile or the row count.
  EXPECT_EQ(Values(match.tmpl->Space(), "block_rows").back(), 8);
}

TEST(TritonRowwise, GroupNormWeightsAreBroadcastLoads) {
  const auto match = MatchTritonTemplate(CaseProblem("group_norm"));
  ASSERT_TRUE(match.tmpl);
  const std::string src = match.tmpl->Generate(match.tmpl->Drafts().front());
  EXPECT_TRUE(Has(src, "tl.load(in1 + "));
  EXPECT_TRUE(Has(src, "tl.load(in2 + "));
  EXPECT_TRUE(Has(src, "tl.math.rsqrt("));
}

// Group norm at [2, 8, 64, 64], 4 groups: rows of 2 channels x 4096; with r blocks of
// 2048 the channel r // 4096 is one value per block, loaded once from the block start
// (the per-element gather stalled the H200 at [32, 64, 128, 128]).
TEST(TritonRowwise, GroupNormWeightIsOneLoadPerBlockWhenChannelsAlignWithBlocks) {
  core::Problem p = CaseProblem("group_norm");
  for (auto& node : p.graph.nodes) {
    if (node.shape == std::vector<int64_t>{3, 8, 5, 4}) node.shape = {2, 8, 64, 64};
    if (node.shape == std::vector<int64_t>{3, 4}) node.shape = {2, 4};
    for (auto& a : node.args) {
      if (a.name == "N") a.value = 2;
      if (a.name == "HxW") a.value = 4096;
    }
  }
  const auto match = MatchTritonTemplate(p);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  for (const char* layout : {"split", "rows"}) {
    nlohmann::json knobs = match.tmpl->Drafts().front();
    knobs["layout"] = layout;
    if (std::string(layout) == "split") {
      knobs["split_block"] = 2048;
      knobs["programs_per_row"] = 4;
    } else {
      knobs["pass"] = "looped";
      knobs["block_r"] = 2048;
    }
    ASSERT_TRUE(match.tmpl->Space().IsValid(match.tmpl->Space().Canonical(knobs))) << knobs.dump();
    const std::string src = match.tmpl->Generate(knobs);
    const std::string start = std::string(layout) == "split" ? "(p * CHUNK + k)" : "r0";
    EXPECT_TRUE(Has(src, "tl.load(in1 + (tl.minimum(" + start + ", 8191) // 4096)")) << src;
    EXPECT_FALSE(Has(src, "(r // 4096)")) << src;
  }
  // The captured [3, 8, 5, 4] case's channels (20 elements) straddle blocks: gathers stay.
  const auto small = MatchTritonTemplate(CaseProblem("group_norm"));
  ASSERT_TRUE(small.tmpl);
  EXPECT_FALSE(Has(small.tmpl->Generate(small.tmpl->Drafts().front()), "tl.minimum("));
}

TEST(TritonRowwise, FewLongRowsDraftTheSplitLayoutFirst) {
  GraphBuilder g({8, 65536});
  g.Input("x");
  g.Call("s", "aten.sum.dim_IntList",
         {Ref("self", "x"), Val("dim", {1}), Val("keepdim", false), Val("dtype", nullptr)});
  core::Problem p = g.Finish("s");
  p.graph.nodes.back().shape = {8};
  const auto match = MatchTritonTemplate(p);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  const auto first = match.tmpl->Drafts().front();
  EXPECT_EQ(first.at("layout"), "split");
  EXPECT_EQ(first.at("programs_per_row"), 16);  // 8 x 16 programs of 4096 elements: ~ one per SM
  EXPECT_EQ(Values(match.tmpl->Space(), "pass"),
            std::vector<nlohmann::json>{"looped"});  // 65536 > tile
}

TEST(TritonRowwise, TemplateChoiceByGraph) {
  // softmax over a middle dim: not the last-dim template, rowwise.
  const auto mid = MatchTritonTemplate(CaseProblem("softmax_mid"));
  ASSERT_TRUE(mid.tmpl) << mid.unsupported;
  EXPECT_EQ(mid.tmpl->Name(), "triton_rowwise");
  // Same-shape elementwise graphs stay with pointwise.
  GraphBuilder g({4, 8});
  g.Input("x");
  g.Call("out", "aten.relu.default", {Ref("self", "x")});
  EXPECT_EQ(MatchTritonTemplate(g.Finish("out")).tmpl->Name(), "triton_pointwise");
  // An elementwise graph the pointwise family cannot spell goes to the loop nest.
  GraphBuilder h({4, 8});
  h.Input("x");
  h.Call("out", "aten.pow.Tensor_Scalar", {Ref("self", "x"), Val("exponent", 1.5)});
  const auto nest = MatchTritonTemplate(h.Finish("out"));
  ASSERT_TRUE(nest.tmpl) << nest.unsupported;
  EXPECT_EQ(nest.tmpl->Name(), "triton_loop_nest");
}

core::Problem ReverseScan() {
  GraphBuilder g({5, 3000});
  g.Input("x");
  g.Call("flip", "aten.flip.default", {Ref("self", "x"), Val("dims", {1})});
  g.Call("scan", "aten.cumsum.default",
         {Ref("self", "flip"), Val("dim", 1), Val("dtype", nullptr)});
  g.Call("flip_1", "aten.flip.default", {Ref("self", "scan"), Val("dims", {1})});
  return g.Finish("flip_1");
}

TEST(TritonScan, ReverseRowScanCarriesAPrefixAcrossBlocks) {
  const auto match = MatchTritonTemplate(ReverseScan());
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "triton_scan");
  EXPECT_EQ(Values(match.tmpl->Space(), "block"),
            (std::vector<nlohmann::json>{256, 512, 1024, 2048, 4096}));
  EXPECT_EQ(match.tmpl->Space().Find("accumulator")->safe_value, "float64");
  EXPECT_EQ(match.tmpl->Drafts().front().at("accumulator"), "float64");
  const std::string src = match.tmpl->Generate({{"block", 1024}, {"accumulator", "float32"}});
  EXPECT_TRUE(Has(src, "tl.cumsum(v, axis=0, reverse=True)"));
  EXPECT_TRUE(Has(src, "start = (NB - 1 - t) * BLOCK"));
  EXPECT_TRUE(Has(src, "carry = carry + tl.sum(v, axis=0, keep_dims=KD)"));
  EXPECT_TRUE(Has(src, "_scan[(5,)](inputs[0], out, N=3000, NB=3, BLOCK=1024"));
}

TEST(TritonScan, MaskedExclusiveScanSpellsPrologueAndEpilogue) {
  GraphBuilder g({4, 6, 9});
  g.Input("x");
  g.Input("mask");
  g.Graph().nodes.back().dtype = core::DType::kBool;
  g.Call("mul", "aten.mul.Tensor", {Ref("self", "x"), Ref("other", "mask")});
  g.Call("cumsum", "aten.cumprod.default",
         {Ref("self", "mul"), Val("dim", 1), Val("dtype", nullptr)});
  g.Call("sub", "aten.sub.Tensor", {Ref("self", "cumsum"), Ref("other", "x"), Val("alpha", 1)});
  const auto match = MatchTritonTemplate(g.Finish("sub"));
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(Values(match.tmpl->Space(), "block_i"), std::vector<nlohmann::json>{16});
  const std::string src = match.tmpl->Generate(match.tmpl->Drafts().front());
  EXPECT_TRUE(Has(src, "x1 = (tl.load(x1_ptr + idx, mask=mask, other=0) != 0)"));
  EXPECT_TRUE(Has(src, "p0 = x0 * x1  # aten.mul.Tensor"));
  EXPECT_TRUE(Has(src, "e0 = s - x0  # aten.sub.Tensor"));
  EXPECT_TRUE(Has(src, "tl.cumprod(v, axis=0, reverse=False)"));
  EXPECT_TRUE(Has(src,
                  "carry = carry * tl.sum(tl.where(j == start + BLOCK - 1, s_acc, 0.0), axis=0, "
                  "keep_dims=KD)"));
  EXPECT_TRUE(Has(src, "idx = (o * N + j) * 9 + c"));
}

TEST(TritonScan, UnsupportedScansSayWhy) {
  GraphBuilder g({4, 8});
  g.Input("x");
  g.Call("out", "aten.logcumsumexp.default", {Ref("self", "x"), Val("dim", 1)});
  const core::Problem p = g.Finish("out");
  // The scan template's reason ...
  const auto scan = templates::MatchTritonScan(p);
  ASSERT_TRUE(scan && !scan->tmpl);
  EXPECT_EQ(scan->unsupported,
            "unsupported_op: aten.logcumsumexp.default (the scan template handles cumsum and cumprod)");
  // ... and, with no lowering either, the answer names the node.
  EXPECT_EQ(MatchTritonTemplate(p).unsupported, "unsupported_op: aten.logcumsumexp.default (node out)");
}

}  // namespace
}  // namespace kernelevolve::template_test
