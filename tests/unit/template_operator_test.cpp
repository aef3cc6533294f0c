// TemplateOperator behaviour without compiling: support decisions, drafts,
// neighbours, determinism and deduplication.
#include "operators/template/template_operator.h"

#include <gtest/gtest.h>

#include <set>

#include "core/error.h"
#include "operators/template/kernel_template.h"
#include "operators/template/knob_space.h"
#include "operators/template/pointwise_expr.h"
#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

using operators::OperatorContext;
using operators::TemplateOperator;

core::Problem UnaryProblem(const std::string& target, std::vector<core::OpArg> extra = {},
                           int threads = 2) {
  GraphBuilder g({4, 256});
  g.Input("x");
  std::vector<core::OpArg> args = {Ref("self", "x")};
  for (auto& a : extra) args.push_back(a);
  g.Call("y", target, args);
  return g.Finish("y", threads);
}

core::Problem SoftmaxProblem(const std::string& target, int64_t dim) {
  GraphBuilder g({4, 256});
  g.Input("x");
  g.Call("y", target, {Ref("self", "x"), Val("dim", dim), Val("half_to_float", false)});
  return g.Finish("y");
}

std::string Reason(const core::Problem& p) {
  return TemplateOperator().Unsupported(p).value_or("supported");
}

std::vector<core::Candidate> Propose(const core::Problem& p, int n,
                                     const search::Node* parent = nullptr,
                                     const std::unordered_set<std::string>* seen = nullptr,
                                     int threads = 2) {
  TemplateOperator op;
  OperatorContext context;
  context.problem = &p;
  context.parent = parent;
  context.seen_hashes = seen;
  context.threads = threads;
  return op.Propose(context, n);
}

search::Node ParentNode(const core::Candidate& c, core::Status status, bool correct,
                        double speedup) {
  search::Node node;
  node.candidate = c;
  node.source_hash = core::ContentHash(c.source);
  node.evaluation.status = status;
  node.evaluation.correct = correct;
  node.evaluation.message = correct ? "ok" : "max abs error 0.25 at index 7\nmore detail";
  node.evaluation.speedup_vs_eager.value = speedup;
  return node;
}

TEST(TemplateOperator, SupportsEveryActivationOfTheBrief) {
  EXPECT_EQ(TemplateOperator().Name(), "template");
  for (const auto& [target, args] : std::vector<std::pair<std::string, std::vector<core::OpArg>>>{
           {"aten.relu.default", {}},
           {"aten.leaky_relu.default", {Val("negative_slope", 0.01)}},
           {"aten.gelu.default", {Val("approximate", "tanh")}},
           {"aten.sigmoid.default", {}},
           {"aten.tanh.default", {}},
           {"aten.silu.default", {}},
           {"aten.softplus.default", {Val("beta", 1), Val("threshold", 20)}},
           {"aten.elu.default", {Val("alpha", 1.0), Val("scale", 1.0), Val("input_scale", 1.0)}},
           {"aten.hardtanh.default", {Val("min_val", -1.0), Val("max_val", 1.0)}},
           {"aten.hardsigmoid.default", {}},
       }) {
    EXPECT_EQ(Reason(UnaryProblem(target, args)), "supported") << target;
  }
  EXPECT_EQ(Reason(SoftmaxProblem("aten._softmax.default", -1)), "supported");
  EXPECT_EQ(Reason(SoftmaxProblem("aten._log_softmax.default", 1)), "supported");
}

TEST(TemplateOperator, NamesTheFirstUncoveredOp) {
  // mm without its second operand: known op, unusable arguments, the node named.
  EXPECT_EQ(Reason(UnaryProblem("aten.mm.default")),
            "unsupported_op: aten.mm.default (argument 'mat2' is not a tensor) (node y)");
  GraphBuilder g({8});
  g.Input("x");
  g.Call("relu", "aten.relu.default", {Ref("self", "x")});
  g.Call("cumsum", "aten.cumsum.default", {Ref("self", "relu"), Val("dim", 0)});
  g.Call("histc", "aten.histc.default", {Ref("self", "cumsum")});
  // relu and cumsum are covered (scan template); histc is the first op nothing covers.
  EXPECT_EQ(Reason(g.Finish("histc")), "unsupported_op: aten.histc.default (node histc)");
  EXPECT_EQ(Reason(UnaryProblem("aten.gelu.default", {Val("approximate", "erf2")})),
            "unsupported_op: aten.gelu.default (approximate='erf2' is not 'none' or 'tanh') (node y)");
  EXPECT_TRUE(Propose(UnaryProblem("aten.mm.default"), 4).empty());
}

TEST(TemplateOperator, SoftmaxOverANonLastDimOrWithOtherOpsGoesToRowwise) {
  EXPECT_EQ(Reason(SoftmaxProblem("aten._softmax.default", 0)), "supported");
  EXPECT_EQ(Reason(SoftmaxProblem("aten._log_softmax.default", -2)), "supported");
  GraphBuilder g({4, 16});
  g.Input("x");
  g.Call("exp", "aten.exp.default", {Ref("self", "x")});
  g.Call("y", "aten._softmax.default",
         {Ref("self", "exp"), Val("dim", -1), Val("half_to_float", false)});
  const core::Problem fused = g.Finish("y");
  EXPECT_EQ(Reason(fused), "supported");
  EXPECT_EQ(operators::templates::MatchTemplate(fused, 2).tmpl->Name(), "rowwise");
}

TEST(TemplateOperator, RejectsOtherDtypesBroadcastingAndMissingGraphs) {
  // The pointwise template refuses int64 and broadcasting inputs (float32, same
  // shapes); the loop nest takes both.
  core::Problem ints = UnaryProblem("aten.relu.default");
  ints.graph.nodes[0].dtype = core::DType::kInt64;
  EXPECT_EQ(operators::templates::BuildPointwiseExpr(ints.graph, operators::templates::MathFlavor::kLibm).unsupported,
            "unsupported_dtype: input 'x' is int64 (the pointwise template handles float32)");
  EXPECT_EQ(Reason(ints), "supported");
  const auto ints_match = operators::templates::MatchTemplate(ints, 1);
  ASSERT_TRUE(ints_match.tmpl) << ints_match.unsupported;
  EXPECT_EQ(ints_match.tmpl->Name(), "loop_nest");
  core::Problem broadcast = UnaryProblem("aten.relu.default");
  broadcast.graph.nodes[0].shape = {256};
  EXPECT_EQ(Reason(broadcast), "supported");
  const auto broadcast_match = operators::templates::MatchTemplate(broadcast, 1);
  ASSERT_TRUE(broadcast_match.tmpl) << broadcast_match.unsupported;
  EXPECT_EQ(broadcast_match.tmpl->Name(), "loop_nest");
  core::Problem empty;
  empty.graph_error = "make_fx failed";
  EXPECT_EQ(Reason(empty),
            "unsupported_graph: the problem has no captured op graph (make_fx failed)");
}

TEST(TemplateOperator, DraftsStartWithTheScalarBaselineThenVectorizedThreaded) {
  const auto drafts = Propose(UnaryProblem("aten.silu.default"), 3);
  ASSERT_EQ(drafts.size(), 3u);
  EXPECT_EQ(drafts[0].knobs,
            nlohmann::json({{"simd", "off"}, {"threads", "1"}, {"unroll", 1}}));
  EXPECT_EQ(drafts[0].rationale, "draft (baseline): scalar std:: math, 1 thread");
  EXPECT_EQ(drafts[1].knobs["simd"], "on");
  EXPECT_EQ(drafts[1].knobs["threads"], "all");
  EXPECT_EQ(drafts[1].rationale,
            "draft: vectorized math prelude, all threads, 16384-element blocks");
  for (const auto& d : drafts) {
    EXPECT_EQ(d.operator_name, "template");
    EXPECT_EQ(d.template_name, "pointwise");
    EXPECT_NE(d.source.find("Generated by kernelevolve, template \"pointwise\""),
              std::string::npos);
    EXPECT_NE(d.source.find("// Knobs: " + d.knobs.dump()), std::string::npos);
    EXPECT_NE(d.source.find("extern \"C\" int kernelevolve_entry("), std::string::npos);
    EXPECT_NE(d.source.find("aten.silu.default(self=x)"), std::string::npos);
  }
  EXPECT_NE(drafts[0].source.find("std::exp(-x)"), std::string::npos);
  EXPECT_NE(drafts[1].source.find("ke_exp(-x)"), std::string::npos);
  EXPECT_NE(drafts[1].source.find("#pragma omp parallel for"), std::string::npos);
}

TEST(TemplateOperator, DraftsCoverTheWholeSpaceWithoutRepeats) {
  const auto all = Propose(SoftmaxProblem("aten._softmax.default", -1), 100);
  ASSERT_EQ(all.size(), 24u);
  std::set<std::string> hashes, knobs;
  for (const auto& c : all) {
    hashes.insert(core::ContentHash(c.source));
    knobs.insert(c.knobs.dump());
    EXPECT_EQ(c.template_name, "softmax_lastdim");
  }
  EXPECT_EQ(hashes.size(), 24u);
  EXPECT_EQ(knobs.size(), 24u);
  EXPECT_EQ(all[0].knobs,
            nlohmann::json({{"math", "libm"}, {"threads", "1"}, {"algorithm", "three_pass"}}));
}

TEST(TemplateOperator, SingleThreadRunnerGetsNoParallelSettings) {
  const auto all = Propose(UnaryProblem("aten.tanh.default", {}, 1), 100, nullptr, nullptr, 1);
  ASSERT_EQ(all.size(), 6u);
  for (const auto& c : all) {
    EXPECT_EQ(c.knobs["threads"], "1");
    EXPECT_EQ(c.source.find("omp parallel"), std::string::npos);
  }
}

TEST(TemplateOperator, IsDeterministic) {
  const core::Problem p = UnaryProblem("aten.gelu.default", {Val("approximate", "none")});
  const auto a = Propose(p, 10);
  const auto b = Propose(p, 10);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].source, b[i].source);
    EXPECT_EQ(a[i].knobs, b[i].knobs);
    EXPECT_EQ(a[i].rationale, b[i].rationale);
  }
}

TEST(TemplateOperator, SkipsSeenHashes) {
  const core::Problem p = UnaryProblem("aten.relu.default");
  const auto first = Propose(p, 3);
  std::unordered_set<std::string> seen = {core::ContentHash(first[0].source),
                                          core::ContentHash(first[1].source)};
  const auto next = Propose(p, 100, nullptr, &seen);
  ASSERT_EQ(next.size(), 22u);
  EXPECT_EQ(next[0].source, first[2].source);
  for (const auto& c : next) EXPECT_EQ(seen.count(core::ContentHash(c.source)), 0u);
}

TEST(TemplateOperator, AfterAFailureMovesTowardTheSaferSettingFirst) {
  const core::Problem p = UnaryProblem("aten.gelu.default", {Val("approximate", "none")});
  const auto drafts = Propose(p, 3);
  const search::Node parent = ParentNode(drafts[2], core::Status::kIncorrect, false,
                                         0);  // vectorized, all, 65536, unroll 2
  const std::unordered_set<std::string> seen = {parent.source_hash};
  const auto next = Propose(p, 100, &parent, &seen);
  ASSERT_GE(next.size(), 3u);
  EXPECT_EQ(next[0].knobs["simd"], "off");
  EXPECT_EQ(
      next[0].rationale,
      "parent failed (incorrect: max abs error 0.25 at index 7): back to safe accumulation / "
      "scalar math; move to safer omp simd off");
  EXPECT_EQ(next[1].knobs["threads"], "1");
  EXPECT_EQ(next[2].knobs["unroll"], 1);
  EXPECT_NE(next[2].rationale.find("move to safer 1x unroll"), std::string::npos);
  const auto& space = operators::templates::PointwiseKnobSpace(true);
  std::set<std::string> knobs;
  for (size_t i = 0; i < next.size(); ++i) {
    EXPECT_NE(next[i].knobs, parent.candidate.knobs);
    EXPECT_TRUE(knobs.insert(next[i].knobs.dump()).second) << "duplicate " << next[i].knobs;
    if (i < 5) EXPECT_LE(space.Distance(next[i].knobs, parent.candidate.knobs), 2) << next[i].knobs;
  }
  EXPECT_EQ(next.size(), 23u);  // everything but the parent, nearest first
}

TEST(TemplateOperator, AfterASuccessTriesFasterSettingsFirst) {
  const core::Problem p = UnaryProblem("aten.tanh.default");
  const auto drafts = Propose(p, 1);
  const search::Node parent = ParentNode(drafts[0], core::Status::kOk, true, 1.8);
  const auto next = Propose(p, 4, &parent);
  ASSERT_EQ(next.size(), 4u);
  EXPECT_EQ(next[0].knobs["simd"], "on");
  EXPECT_EQ(next[0].rationale, "parent correct at 1.80x; try omp simd on");
  EXPECT_EQ(next[1].knobs["threads"], "all");
  EXPECT_EQ(next[2].rationale, "parent correct at 1.80x; try 2x unroll");
  EXPECT_EQ(next[3].rationale, "parent correct at 1.80x; try 4x unroll");
}

TEST(TemplateOperator, AfterASuccessFallbackSettingsComeLast) {
  // A correct parent at the fast values (vectorized, all threads): moves back to the
  // safe value of a knob that has a fast one (scalar variant, one thread; not unroll,
  // which has no fast value) are proposed only after every setting that makes none,
  // two-knob settings included.
  const core::Problem p = UnaryProblem("aten.tanh.default");
  const auto drafts = Propose(p, 3);
  const search::Node parent = ParentNode(drafts[2], core::Status::kOk, true, 1.5);  // vectorized, all, unroll 2
  ASSERT_EQ(parent.candidate.knobs["simd"], "on");
  ASSERT_EQ(parent.candidate.knobs["threads"], "all");
  const std::unordered_set<std::string> seen = {parent.source_hash};
  const auto next = Propose(p, 100, &parent, &seen);
  ASSERT_EQ(next.size(), 23u);  // everything but the parent
  auto fallback = [&](const core::Candidate& c) {
    return c.knobs["simd"] == "off" || c.knobs["threads"] == "1";
  };
  size_t first_fallback = next.size();
  for (size_t i = 0; i < next.size(); ++i) {
    if (fallback(next[i])) {
      first_fallback = std::min(first_fallback, i);
    } else {
      EXPECT_LT(i, first_fallback) << "a setting without fallbacks after one with: " << next[i].knobs;
    }
  }
  ASSERT_LT(first_fallback, next.size());
  EXPECT_GT(first_fallback, 3u);  // the block moves and two-knob settings come first
  EXPECT_NE(next[first_fallback].rationale.find("faster settings tried, try the fallback"), std::string::npos)
      << next[first_fallback].rationale;
}

TEST(TemplateOperator, SoftmaxNeighboursPreferVectorizedMathAndThreads) {
  const core::Problem p = SoftmaxProblem("aten._log_softmax.default", -1);
  const auto drafts = Propose(p, 1);
  const search::Node parent = ParentNode(drafts[0], core::Status::kOk, true, 0.9);
  const auto next = Propose(p, 3, &parent);
  ASSERT_EQ(next.size(), 3u);
  EXPECT_EQ(next[0].knobs["math"], "vectorized");
  EXPECT_EQ(next[1].knobs["threads"], "all");
  EXPECT_EQ(next[2].knobs["algorithm"], "online");
  EXPECT_NE(next[0].source.find("log_softmax over the last dim"), std::string::npos);
}

TEST(TemplateOperator, ExcludesSiblingsAndHandlesForeignParents) {
  const core::Problem p = UnaryProblem("aten.sigmoid.default");
  const auto drafts = Propose(p, 2);
  const search::Node parent = ParentNode(drafts[0], core::Status::kOk, true, 1.0);
  const search::Node sibling = ParentNode(Propose(p, 1, &parent)[0], core::Status::kOk, true, 1.1);
  TemplateOperator op;
  OperatorContext context;
  context.problem = &p;
  context.parent = &parent;
  context.siblings = {&sibling};
  context.threads = 2;
  for (const auto& c : op.Propose(context, 100)) EXPECT_NE(c.knobs, sibling.candidate.knobs);

  core::Candidate foreign = drafts[1];
  foreign.operator_name = "llm:test";
  foreign.template_name = "";
  const search::Node llm_parent = ParentNode(foreign, core::Status::kCompileError, false, 0);
  const auto fresh = Propose(p, 2, &llm_parent);
  ASSERT_EQ(fresh.size(), 2u);
  EXPECT_EQ(fresh[0].rationale.rfind("parent is not a pointwise template candidate", 0), 0u)
      << fresh[0].rationale;
}

TEST(TemplateOperator, RequiresAProblem) {
  TemplateOperator op;
  EXPECT_THROW(op.Propose(OperatorContext{}, 1), core::InternalError);
  EXPECT_TRUE(op.Propose(
                    [] {
                      static core::Problem p = UnaryProblem("aten.relu.default");
                      OperatorContext c;
                      c.problem = &p;
                      return c;
                    }(),
                    0)
                  .empty());
}

}  // namespace
}  // namespace kernelevolve::template_test
