// The rowwise template: lowering of captured graphs into the loop IR, region
// analysis, and generated kernels compiled and run against eager PyTorch outputs
// (cases written by tests/unit/data/rowwise/make_cases.py).
#include <gtest/gtest.h>

#include <fstream>

#include "core/op_graph.h"
#include "eval/safetensors.h"
#include "operators/ir/lower_graph.h"
#include "operators/ir/region.h"
#include "operators/template/kernel_template.h"
#include "operators/template/rowwise_template.h"
#include "operators/template/template_operator.h"
#include "template_test_util.h"
#include "host_tensor_view.h"

namespace kernelevolve::template_test {
namespace {

namespace ir = operators::ir;
namespace templates = operators::templates;

const std::filesystem::path kCases = std::filesystem::path(KE_TEST_DATA_DIR) / "unit" / "data" / "rowwise";

core::Problem CaseProblem(const std::string& name) {
  std::ifstream in(kCases / (name + ".json"));
  core::Problem p;
  p.name = name;
  p.graph = core::OpGraphFromJson(nlohmann::json::parse(in));
  p.threads = 2;
  return p;
}

ir::Region CaseRegion(const std::string& name) {
  const auto lowered = ir::Lower(CaseProblem(name).graph);
  EXPECT_TRUE(lowered.graph) << lowered.unsupported;
  auto region = ir::AnalyzeRegion(*lowered.graph);
  EXPECT_TRUE(region.region) << region.unsupported;
  return *region.region;
}

TEST(RowwiseLowering, RegionsOfCapturedGraphs) {
  struct Want {
    const char* name;
    int64_t o, r, i;
    size_t stages;
  };
  const Want wants[] = {
      {"sum_mid_dim", 6, 37, 5, 1},       {"mean_keepdim", 24, 63, 1, 1},
      {"max_dim_both", 5, 33, 4, 2},      {"layer_norm_affine", 40, 24, 1, 2},
      {"layer_norm_2d", 5, 42, 1, 2},     {"group_norm", 12, 40, 1, 2},
      {"instance_norm", 12, 30, 1, 2},    {"cross_entropy", 16, 11, 1, 3},
      {"full_sum_chunks", 1, 15000, 1, 1}, {"losses", 1, 91, 1, 1},
      {"softmax_mid", 3, 17, 10, 2},      {"batch_norm_eval", 1, 360, 1, 0},
  };
  for (const Want& w : wants) {
    SCOPED_TRACE(w.name);
    const ir::Region region = CaseRegion(w.name);
    EXPECT_EQ(region.outer, w.o);
    EXPECT_EQ(region.reduce, w.r);
    EXPECT_EQ(region.inner, w.i);
    EXPECT_EQ(region.stages.size(), w.stages);
  }
}

TEST(RowwiseLowering, LayerNormBecomesTwoSumsAndBroadcastParameters) {
  const ir::Region region = CaseRegion("layer_norm_affine");
  int sums = 0, small_inputs = 0;
  for (const auto& v : region.graph.values) {
    sums += v.kind == ir::ValueKind::kReduce && v.reduce == ir::ReduceKind::kSum;
    small_inputs += v.kind == ir::ValueKind::kInput && region.level[v.id] == ir::Level::kSmall;
  }
  EXPECT_EQ(sums, 2);          // mean, then the sum of squared deviations
  EXPECT_EQ(small_inputs, 2);  // weight and bias [24]
}

TEST(RowwiseLowering, CrossEntropyReducesRowsInTheTail) {
  const ir::Region region = CaseRegion("cross_entropy");
  EXPECT_EQ(region.tail_inputs.size(), 2u);  // per-row losses and per-row weights
}

TEST(RowwiseLowering, OffsetTermsOfBroadcastOperands) {
  // weight [24] inside [40, 24] rows of R = 24: the offset is r.
  auto terms = ir::OffsetTerms({24}, {4, 10, 24}, false, 40, 24, 1);
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(terms[0].part, ir::Part::kReduce);
  EXPECT_EQ(terms[0].divisor, 1);
  EXPECT_EQ(terms[0].modulus, 0);
  // group norm weight [G=4, C/G=2, 1] in [N=3, 4, 2, HW=20]: (o % 4) * 2 + r / 20.
  terms = ir::OffsetTerms({4, 2, 1}, {3, 4, 2, 20}, false, 12, 40, 1);
  ASSERT_EQ(terms.size(), 2u);
  EXPECT_EQ(terms[0].part, ir::Part::kReduce);
  EXPECT_EQ(terms[0].divisor, 20);
  EXPECT_EQ(terms[1].part, ir::Part::kOuter);
  EXPECT_EQ(terms[1].modulus, 4);
  EXPECT_EQ(terms[1].stride, 2);
  // iota along dim 1 of [5, 33, 4] with R = 33, I = 4: r itself.
  terms = ir::OffsetTerms({}, {5, 33, 4}, false, 5, 33, 4, 1);
  ASSERT_EQ(terms.size(), 1u);
  EXPECT_EQ(terms[0].part, ir::Part::kReduce);
}

TEST(RowwiseLowering, UnsupportedGraphsGiveReasons) {
  GraphBuilder histc({4, 8});
  histc.Input("x");
  histc.Call("c", "aten.histc.default", {Ref("self", "x"), Val("bins", 10)});
  operators::TemplateOperator op;
  EXPECT_EQ(op.Unsupported(histc.Finish("c")).value_or(""), "unsupported_op: aten.histc.default (node c)");

  // The rowwise region refuses these two graphs (and says why); the loop nest takes them.
  GraphBuilder split({4, 5, 6});  // sum over dims 0 and 2: not contiguous
  split.Input("x");
  split.Call("s", "aten.sum.dim_IntList",
             {Ref("self", "x"), Val("dim", {0, 2}), Val("keepdim", true), Val("dtype", nullptr)});
  core::Problem split_problem = split.Finish("s");
  split_problem.graph.nodes[1].shape = {1, 5, 1};  // the builder gives every node [4, 5, 6]
  const auto why = templates::MatchRowwise(split_problem.graph).unsupported;
  EXPECT_NE(why.find("unsupported_graph: reduction over dims [0, 2]"), std::string::npos) << why;
  const auto split_nest = templates::MatchTemplate(split_problem, 1);
  ASSERT_TRUE(split_nest.tmpl) << split_nest.unsupported;
  EXPECT_EQ(split_nest.tmpl->Name(), "loop_nest");

  GraphBuilder two({4, 6});  // reductions over different dims in one graph
  two.Input("x");
  two.Call("a", "aten.sum.dim_IntList",
           {Ref("self", "x"), Val("dim", {0}), Val("keepdim", true), Val("dtype", nullptr)});
  two.Call("b", "aten.sum.dim_IntList",
           {Ref("self", "x"), Val("dim", {1}), Val("keepdim", true), Val("dtype", nullptr)});
  two.Call("c", "aten.mul.Tensor", {Ref("self", "a"), Ref("other", "b")});
  core::Problem two_problem = two.Finish("c");
  two_problem.graph.nodes[1].shape = {1, 6};  // as a capture records them
  two_problem.graph.nodes[2].shape = {4, 1};
  const auto why2 = templates::MatchRowwise(two_problem.graph).unsupported;
  EXPECT_NE(why2.find("unsupported_graph: reductions over different dim sets"), std::string::npos)
      << why2;
  const auto two_nest = templates::MatchTemplate(two_problem, 1);
  ASSERT_TRUE(two_nest.tmpl) << two_nest.unsupported;
  EXPECT_EQ(two_nest.tmpl->Name(), "loop_nest");

  GraphBuilder expanded({16, 5});  // x.sum(1, keepdim=True).expand(-1, 5): a broadcast output
  expanded.Input("x");
  expanded.Call("s", "aten.sum.dim_IntList",
                {Ref("self", "x"), Val("dim", {1}), Val("keepdim", true), Val("dtype", nullptr)});
  expanded.Call("e", "aten.expand.default", {Ref("self", "s"), Val("size", {-1, 5})});
  core::Problem expanded_problem = expanded.Finish("e");
  expanded_problem.graph.nodes[1].shape = {16, 1};
  const auto why3 = templates::MatchRowwise(expanded_problem.graph).unsupported;
  EXPECT_NE(why3.find("unsupported_graph: output 0 ([16, 5]) broadcasts a value of shape [16, 1]"), std::string::npos)
      << why3;
  const auto expanded_nest = templates::MatchTemplate(expanded_problem, 1);
  ASSERT_TRUE(expanded_nest.tmpl) << expanded_nest.unsupported;
  EXPECT_EQ(expanded_nest.tmpl->Name(), "loop_nest");
}

TEST(RowwiseLowering, MatchTemplateKeepsSpecializedTemplates) {
  GraphBuilder relu({4, 8});
  relu.Input("x");
  relu.Call("y", "aten.relu.default", {Ref("self", "x")});
  EXPECT_EQ(templates::MatchTemplate(relu.Finish("y"), 2).tmpl->Name(), "pointwise");
  GraphBuilder softmax({4, 8});
  softmax.Input("x");
  softmax.Call("y", "aten._softmax.default",
               {Ref("self", "x"), Val("dim", -1), Val("half_to_float", false)});
  EXPECT_EQ(templates::MatchTemplate(softmax.Finish("y"), 2).tmpl->Name(), "softmax_lastdim");
  EXPECT_EQ(templates::MatchTemplate(CaseProblem("softmax_mid"), 2).tmpl->Name(), "rowwise");
}

// ---- generated kernels against eager outputs ----------------------------------

/// Compiles the template's settings for a case and checks every output on the case's
/// inputs (1e-4 relative + absolute, integer outputs exactly): the first two drafts
/// (the libm single-thread baseline and the vectorized multi-threaded one), or with
/// `all` the whole knob space.
enum class Settings { kTwoDrafts, kAllDrafts, kWholeSpace };

void CheckCase(const std::string& name, Settings which = Settings::kTwoDrafts) {
  const bool all = which == Settings::kWholeSpace;
  SCOPED_TRACE(name);
  const auto match = templates::MatchTemplate(CaseProblem(name), 2);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  ASSERT_EQ(match.tmpl->Name(), "rowwise");
  auto settings = all ? match.tmpl->Space().Enumerate() : match.tmpl->Drafts();
  if (which == Settings::kTwoDrafts && settings.size() > 2) settings.resize(2);
  std::vector<std::string> sources;
  for (const auto& k : settings) sources.push_back(match.tmpl->Generate(k));
  const auto kernels = CompileAll(sources);
  auto file = eval::ReadSafetensors(kCases / (name + ".safetensors"));
  std::vector<eval::HostTensor*> ins, refs;
  for (auto& t : file.tensors) (t.name.rfind("in.", 0) == 0 ? ins : refs).push_back(&t);
  auto by_index = [](auto& v) {
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) {
      return std::stoi(a->name.substr(a->name.find('.') + 1)) < std::stoi(b->name.substr(b->name.find('.') + 1));
    });
  };
  by_index(ins);
  by_index(refs);
  for (size_t k = 0; k < kernels.size(); ++k) {
    SCOPED_TRACE(settings[k].dump());
    ASSERT_NE(kernels[k]->entry, nullptr) << kernels[k]->log << sources[k];
    std::vector<DLTensor> in_views;
    for (auto* t : ins) in_views.push_back(testing_util::HostView(*t));
    std::vector<eval::HostTensor> outs;
    for (auto* t : refs) {
      outs.push_back(*t);
      std::fill(outs.back().bytes.begin(), outs.back().bytes.end(), std::byte{0x7f});
    }
    std::vector<DLTensor> out_views;
    for (auto& t : outs) out_views.push_back(testing_util::HostView(t));
    ASSERT_EQ(kernels[k]->entry(in_views.data(), static_cast<int32_t>(in_views.size()),
                                out_views.data(), static_cast<int32_t>(out_views.size())), 0);
    for (size_t o = 0; o < outs.size(); ++o) {
      int failures = 0;
      for (int64_t e = 0; e < outs[o].NumElements() && failures < 3; ++e) {
        const bool i64 = outs[o].dtype == core::DType::kInt64;
        const double got = i64 ? outs[o].Data<int64_t>()[e] : outs[o].Data<float>()[e];
        const double want = i64 ? refs[o]->Data<int64_t>()[e] : refs[o]->Data<float>()[e];
        if (i64 ? got != want : !Close(got, want)) {
          ++failures;
          ADD_FAILURE() << "output " << o << " element " << e << ": got " << got << ", want " << want
                        << "\n" << (failures == 1 ? sources[k] : "");
        }
      }
    }
  }
}

TEST(RowwiseKernel, SumMidDim) { CheckCase("sum_mid_dim"); }
TEST(RowwiseKernel, MeanKeepdim) { CheckCase("mean_keepdim"); }
TEST(RowwiseKernel, MaxDimValuesAndIndices) { CheckCase("max_dim_both"); }
TEST(RowwiseKernel, ArgminLast) { CheckCase("argmin_last"); }
TEST(RowwiseKernel, ProdDim) { CheckCase("prod_dim"); }
TEST(RowwiseKernel, Norms) { CheckCase("norms"); }
TEST(RowwiseKernel, VarStd) { CheckCase("var_std"); }
TEST(RowwiseKernel, SoftmaxMiddleDimAllDrafts) { CheckCase("softmax_mid", Settings::kAllDrafts); }
TEST(RowwiseKernel, LogSoftmaxFirstDim) { CheckCase("log_softmax_first"); }
TEST(RowwiseKernel, LayerNormAffine) { CheckCase("layer_norm_affine"); }
TEST(RowwiseKernel, LayerNormTwoDims) { CheckCase("layer_norm_2d"); }
TEST(RowwiseKernel, RmsNormWeight) { CheckCase("rms_norm_weight"); }
TEST(RowwiseKernel, GroupNorm) { CheckCase("group_norm"); }
TEST(RowwiseKernel, InstanceNorm) { CheckCase("instance_norm"); }
TEST(RowwiseKernel, BatchNormEval) { CheckCase("batch_norm_eval"); }
TEST(RowwiseKernel, Losses) { CheckCase("losses"); }
TEST(RowwiseKernel, KlDiv) { CheckCase("kl_div"); }
TEST(RowwiseKernel, Hinge) { CheckCase("hinge"); }
TEST(RowwiseKernel, CrossEntropy) { CheckCase("cross_entropy"); }
TEST(RowwiseKernel, FullSumInChunks) { CheckCase("full_sum_chunks"); }
TEST(RowwiseKernel, SwishBiasLayerNorm) { CheckCase("swish_bias_layer_norm"); }
TEST(RowwiseKernel, ScaleClampSum) { CheckCase("scale_clamp_sum"); }
TEST(RowwiseKernel, ResidualRmsNorm) { CheckCase("residual_rms_norm"); }
TEST(RowwiseKernel, LayerNormGelu) { CheckCase("layer_norm_gelu"); }

// An argmin's index (the iota along the reduced dim) is converted to float through
// int32: AVX2 has no int64 -> float vector conversion, and with one GCC left the
// whole index loop scalar on x86-64-v3 (level-1 argmin_dim ran at 0.90x eager there).
// Built for x86-64-v3 on any machine; not run.
TEST(RowwiseKernel, ArgminIndexLoopsVectorizeWithAvx2) {
  const auto match = templates::MatchTemplate(CaseProblem("argmin_last"), 2);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  const nlohmann::json knobs = {{"math", "vectorized"}, {"threads", "all"}};
  const std::string source = match.tmpl->Generate(match.tmpl->Space().Canonical(knobs));
  EXPECT_NE(source.find("static_cast<float>(static_cast<int32_t>("), std::string::npos) << source;
  const auto kernel = CompileAndLoad(source, 0, std::string(kVectorizeReport) + " -march=x86-64-v3");
  ASSERT_NE(kernel->entry, nullptr) << kernel->log;
  ExpectSimdLoopsVectorized(source, kernel->log);
}

// Loop-invariant code motion, the r split and row buffers (rowwise_loops.cpp) are
// exercised on every draft of these cases: the per-channel parameters of batch and
// group norm, and the swish prologue read by three loops over r.
TEST(RowwiseKernel, BatchNormEvalAllDrafts) { CheckCase("batch_norm_eval", Settings::kAllDrafts); }
TEST(RowwiseKernel, GroupNormAllDrafts) { CheckCase("group_norm", Settings::kAllDrafts); }
TEST(RowwiseKernel, SwishBiasLayerNormAllDrafts) { CheckCase("swish_bias_layer_norm", Settings::kAllDrafts); }

/// The kernel part of a generated source (after the ABI helpers).
std::string KernelPart(const std::string& source) {
  const auto at = source.find("// ---- kernel ---");
  EXPECT_NE(at, std::string::npos);
  return at == std::string::npos ? source : source.substr(at);
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(RowwiseCode, PerChannelParametersAreLoadedOncePerRow) {
  // The captured batch norm at [2, 6, 32, 32]: rows of 1024 elements per (n, c), so
  // every parameter is fixed over a row.
  core::Problem problem = CaseProblem("batch_norm_eval");
  std::string text = core::OpGraphToJson(problem.graph).dump();
  for (auto at = text.find("[4,6,5,3]"); at != std::string::npos; at = text.find("[4,6,5,3]")) {
    text.replace(at, 9, "[2,6,32,32]");
  }
  problem.graph = core::OpGraphFromJson(nlohmann::json::parse(text));
  const auto match = templates::MatchTemplate(problem, 2);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  const std::string k = KernelPart(match.tmpl->Generate(match.tmpl->Drafts().at(1)));
  // Every load of a parameter (in1..in4) and the 1/sqrt(var + eps) come before the
  // element loop; inside it only x (in0) is read.
  const auto loop = k.find("for (int64_t r = 0; r < R; ++r) {");
  ASSERT_NE(loop, std::string::npos) << k;
  for (const char* param : {"in1[", "in2[", "in3[", "in4[", "std::sqrt("}) {
    const auto at = k.find(param);
    ASSERT_NE(at, std::string::npos) << param << "\n" << k;
    EXPECT_LT(at, loop) << param << " should be hoisted out of the r loop\n" << k;
  }
  EXPECT_NE(k.find("in0[", loop), std::string::npos) << k;
}

TEST(RowwiseCode, GroupNormSplitsRSoTheChannelWeightIsLoadedPerChannel) {
  // [3, 8, 5, 4] in 2 groups: rows are (n, group), r runs over 4 channels x 20
  // positions, and the weight index r / 20 becomes r1 of a loop r = r1 * 20 + r2.
  const auto match = templates::MatchTemplate(CaseProblem("group_norm"), 2);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  const std::string k = KernelPart(match.tmpl->Generate(match.tmpl->Drafts().at(1)));
  const auto outer = k.find("for (int64_t r1 = 0; r1 < R / 20; ++r1)");
  ASSERT_NE(outer, std::string::npos) << k;
  const auto inner = k.find("for (int64_t r2 = 0; r2 < 20; ++r2)", outer);
  ASSERT_NE(inner, std::string::npos) << k;
  const auto weight = k.find("in1[", outer);
  ASSERT_NE(weight, std::string::npos) << k;
  EXPECT_LT(weight, inner) << k;
  EXPECT_EQ(k.find("r / 20"), std::string::npos) << "no division left in the inner loop\n" << k;
  // The two statistics loops have nothing to hoist: they stay single flat loops.
  EXPECT_EQ(Count(k, "for (int64_t r1 = 0;"), 1u) << k;
}

TEST(RowwiseCode, RowBufferComputesTheSwishPrologueOnce) {
  const auto match = templates::MatchTemplate(CaseProblem("swish_bias_layer_norm"), 2);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  ASSERT_NE(match.tmpl->Space().Find("row_buffer"), nullptr);
  nlohmann::json knobs = match.tmpl->Drafts().at(1);
  knobs["row_buffer"] = "off";
  const std::string off = KernelPart(match.tmpl->Generate(knobs));
  knobs["row_buffer"] = "on";
  const std::string on = KernelPart(match.tmpl->Generate(knobs));
  // mean, variance and output loops: the sigmoid is spelled in each without the
  // buffer, once with it (stored by the first loop, read as buf<id>[r] after).
  EXPECT_EQ(Count(off, "ke_sigmoid("), 3u) << off;
  EXPECT_EQ(Count(on, "ke_sigmoid("), 1u) << on;
  EXPECT_EQ(Count(on, "alignas(64) float buf"), 1u) << on;
  EXPECT_EQ(Count(on, "] = v"), 1u) << "one store into the buffer\n" << on;
}

TEST(RowwiseCode, NoRowBufferKnobWithoutRecomputedValues) {
  // A plain sum reads x once: nothing would be buffered.
  const auto match = templates::MatchTemplate(CaseProblem("mean_keepdim"), 2);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Space().Find("row_buffer"), nullptr);
}

TEST(RowwiseKernel, WholeKnobSpace_Slow) {
  if (!SlowTestsEnabled()) GTEST_SKIP() << "set KE_SLOW_TESTS=1 to run";
  for (const char* name : {"softmax_mid", "layer_norm_affine", "full_sum_chunks", "cross_entropy",
                           "max_dim_both", "group_norm", "losses"}) {
    CheckCase(name, Settings::kWholeSpace);
  }
}

}  // namespace
}  // namespace kernelevolve::template_test
