// Rule-based diagnosis (operators/template/diagnosis.h) and how it orders the template
// operator's children and fills their rationales.
#include <gtest/gtest.h>

#include "operators/template/diagnosis.h"
#include "operators/template/template_operator.h"
#include "template_test_util.h"

namespace kernelevolve {
namespace {

using operators::Bottleneck;
using operators::Diagnose;

core::Evaluation Correct(double speedup, std::string bound, double fraction) {
  core::Evaluation ev;
  ev.status = core::Status::kOk;
  ev.correct = true;
  ev.message = "ok";
  ev.speedup_vs_eager.value = speedup;
  ev.roofline.bound = std::move(bound);
  ev.roofline.fraction = fraction;
  return ev;
}

TEST(Diagnosis, FailuresGoBackToSafeSettings) {
  core::Evaluation build;
  build.status = core::Status::kCompileError;
  build.message = "error: 'vfoo' was not declared";
  auto d = Diagnose(build);
  EXPECT_EQ(d.bottleneck, Bottleneck::kBuildFailed);
  EXPECT_TRUE(d.prefer_safe);
  EXPECT_EQ(d.text, "parent failed (compile_error: error: 'vfoo' was not declared): back to the settings that "
                    "built: scalar math, no unroll");

  core::Evaluation crash;
  crash.status = core::Status::kCrash;
  crash.message = "killed by SIGSEGV";
  d = Diagnose(crash);
  EXPECT_EQ(d.bottleneck, Bottleneck::kRunFailed);
  ASSERT_FALSE(d.preferred_moves.empty());
  EXPECT_EQ(d.preferred_moves.front().knob, "threads");
  EXPECT_EQ(d.preferred_moves.front().value, "1");

  core::Evaluation wrong;
  wrong.status = core::Status::kIncorrect;
  wrong.message = "max abs error 0.25";
  d = Diagnose(wrong);
  EXPECT_EQ(d.bottleneck, Bottleneck::kIncorrect);
  EXPECT_EQ(d.text, "parent failed (incorrect: max abs error 0.25): back to safe accumulation / scalar math");
  EXPECT_EQ(operators::BottleneckName(d.bottleneck), "incorrect");
}

TEST(Diagnosis, RooflineFractionPicksTheAdvice) {
  auto d = Diagnose(Correct(1.2, "memory", 0.4));
  EXPECT_EQ(d.bottleneck, Bottleneck::kMemoryBound);
  EXPECT_FALSE(d.prefer_safe);
  EXPECT_EQ(d.text,
            "parent correct at 1.20x, memory-bound at 40% of copy bandwidth: vectorize / parallelize / fuse passes");
  EXPECT_EQ(d.preferred_moves.front().knob, "threads");

  d = Diagnose(Correct(3.0, "memory", 0.95));
  EXPECT_EQ(d.bottleneck, Bottleneck::kNearRoofline);
  EXPECT_NE(d.text.find("within 10% of copy bandwidth (95%): only thread/block tuning left"), std::string::npos);
  EXPECT_EQ(d.preferred_moves.front().knob, "block");
  EXPECT_TRUE(d.preferred_moves.front().value.is_null());
  d = Diagnose(Correct(3.0, "memory", 2.1));  // cache-resident: the DRAM roof does not bind
  EXPECT_EQ(d.bottleneck, Bottleneck::kMemoryBound);
  EXPECT_NE(d.text.find("at 210% of copy bandwidth (working set in cache"), std::string::npos) << d.text;
  EXPECT_EQ(d.preferred_moves.front().knob, "threads");

  d = Diagnose(Correct(1.0, "compute", 0.12));
  EXPECT_EQ(d.bottleneck, Bottleneck::kComputeBound);
  EXPECT_NE(d.text.find("compute-bound at 12% of FMA peak"), std::string::npos);

  d = Diagnose(Correct(1.8, "unknown", 0));
  EXPECT_EQ(d.bottleneck, Bottleneck::kUnmeasured);
  EXPECT_EQ(d.text, "parent correct at 1.80x");
  EXPECT_TRUE(d.preferred_moves.empty());
}

TEST(Diagnosis, OrdersTheTemplateOperatorsChildrenAndFillsRationales) {
  template_test::GraphBuilder g({4, 256});
  g.Input("x");
  g.Call("y", "aten.tanh.default", {template_test::Ref("self", "x")});
  const core::Problem p = g.Finish("y", 2);
  operators::TemplateOperator op;
  operators::OperatorContext draft_context;
  draft_context.problem = &p;
  draft_context.threads = 2;
  const auto drafts = op.Propose(draft_context, 3);
  ASSERT_EQ(drafts.size(), 3u);

  // A vectorized multi-threaded parent at 95% of copy bandwidth: block tuning first.
  search::Node near;
  near.candidate = drafts[2];
  near.source_hash = core::ContentHash(near.candidate.source);
  near.evaluation = Correct(2.5, "memory", 0.95);
  operators::OperatorContext context = draft_context;
  context.parent = &near;
  const auto tuned = op.Propose(context, 3);
  ASSERT_FALSE(tuned.empty());
  EXPECT_NE(tuned[0].knobs.value("block", 0), near.candidate.knobs.value("block", 0)) << tuned[0].knobs;
  EXPECT_EQ(tuned[0].rationale.rfind("parent correct at 2.50x, within 10% of copy bandwidth (95%)", 0), 0u)
      << tuned[0].rationale;

  // A scalar single-thread parent at 20%: parallelize first, then vectorize.
  search::Node slow;
  slow.candidate = drafts[0];
  slow.source_hash = core::ContentHash(slow.candidate.source);
  slow.evaluation = Correct(0.8, "memory", 0.2);
  context.parent = &slow;
  const auto faster = op.Propose(context, 2);
  ASSERT_EQ(faster.size(), 2u);
  EXPECT_EQ(faster[0].knobs["threads"], "all");
  EXPECT_EQ(faster[1].knobs["simd"], "on");
  EXPECT_NE(faster[0].rationale.find("memory-bound at 20% of copy bandwidth"), std::string::npos);
}

}  // namespace
}  // namespace kernelevolve
