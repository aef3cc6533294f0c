// Triton source generation (triton_pointwise, triton_softmax_lastdim), template
// choice by target, and the Triton platform's answer parsing. Running the generated
// sources is tests/integration/triton_interpret_test.cpp and tests/python.
#include <gtest/gtest.h>

#include "cli/gpu_target.h"
#include "core/error.h"
#include "operators/template/template_operator.h"
#include "operators/template/triton_pointwise.h"
#include "operators/template/triton_softmax.h"
#include "platforms/triton/triton_platform.h"
#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

using operators::templates::MatchTemplateForTarget;
using operators::templates::PythonFloat;

core::Problem SoftmaxProblem(bool log, std::vector<int64_t> shape) {
  GraphBuilder g(std::move(shape));
  g.Input("x");
  g.Call("out", log ? "aten._log_softmax.default" : "aten._softmax.default",
         {Ref("self", "x"), Val("dim", -1), Val("half_to_float", false)});
  return g.Finish("out");
}

core::Problem LeakyReluPlusY() {
  GraphBuilder g({4, 8});
  g.Input("x");
  g.Input("y");
  g.Call("lr", "aten.leaky_relu.default", {Ref("self", "x"), Val("negative_slope", 0.01)});
  g.Call("out", "aten.add.Tensor", {Ref("self", "lr"), Ref("other", "y"), Val("alpha", 2)});
  return g.Finish("out");
}

TEST(TritonTemplate, PythonFloatLiterals) {
  EXPECT_EQ(PythonFloat(1.0), "1.0");
  EXPECT_EQ(PythonFloat(0.01), "0.01");
  EXPECT_EQ(PythonFloat(-0.5), "(-0.5)");
  EXPECT_EQ(PythonFloat(INFINITY), "float('inf')");
  EXPECT_EQ(PythonFloat(NAN), "float('nan')");
}

TEST(TritonTemplate, PointwiseSpellsTheFusedGraph) {
  const core::Problem problem = LeakyReluPlusY();
  auto match = MatchTemplateForTarget("triton", problem, 1);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "triton_pointwise");
  const std::string src = match.tmpl->Generate({{"block", 2048}, {"num_warps", 8}});
  EXPECT_NE(src.find("def _pointwise(x0_ptr, x1_ptr, out_ptr, n, BLOCK: tl.constexpr):"), std::string::npos) << src;
  EXPECT_NE(src.find("t0 = tl.where(x0 > 0.0, x0, x0 * 0.01)  # aten.leaky_relu.default"), std::string::npos) << src;
  EXPECT_NE(src.find("t1 = t0 + (x1 * 2.0)"), std::string::npos) << src;
  EXPECT_NE(src.find("tl.store(out_ptr + offs, t1, mask=mask)"), std::string::npos);
  EXPECT_NE(src.find("BLOCK = 2048\nNUM_WARPS = 8"), std::string::npos);
  EXPECT_NE(src.find("def kernelevolve_entry(inputs, outputs):"), std::string::npos);
  EXPECT_NE(src.find("(inputs[0], inputs[1], out, n, BLOCK=BLOCK, num_warps=NUM_WARPS)"), std::string::npos);
  EXPECT_THROW(match.tmpl->Generate({{"block", 100}}), core::InvalidInputError);
}

TEST(TritonTemplate, PointwiseWithoutTritonRuleFallsToTheLoopNest) {
  GraphBuilder g({16});
  g.Input("x");
  g.Call("out", "aten.pow.Tensor_Scalar", {Ref("self", "x"), Val("exponent", 1.7)});
  const core::Problem p = g.Finish("out");
  // The pointwise family has no spelling for a fractional power and says so ...
  const auto pointwise = operators::templates::BuildTritonPointwise(p.graph);
  ASSERT_FALSE(pointwise.body);
  EXPECT_EQ(pointwise.unsupported.rfind("unsupported_op: aten.pow.Tensor_Scalar (exponent 1.7", 0), 0u)
      << pointwise.unsupported;
  // ... and the graph still compiles: the loop nest spells pow from the primitive table.
  auto match = MatchTemplateForTarget("triton", p, 1);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "triton_loop_nest");
}

TEST(TritonTemplate, SoftmaxRowVariantKnobs) {
  auto match = MatchTemplateForTarget("triton", SoftmaxProblem(false, {8192, 4096}), 1);
  ASSERT_TRUE(match.tmpl) << match.unsupported;
  EXPECT_EQ(match.tmpl->Name(), "triton_softmax_lastdim");
  const auto drafts = match.tmpl->Drafts();
  ASSERT_EQ(drafts.size(), 3u);
  const std::string plain = match.tmpl->Generate(drafts[0]);
  EXPECT_NE(plain.find("grid = (n_rows,)"), std::string::npos) << plain;
  EXPECT_NE(plain.find("BLOCK=4096, LOG=False, PERSISTENT=False"), std::string::npos) << plain;
  const std::string persistent = match.tmpl->Generate(drafts[1]);
  EXPECT_NE(persistent.find("grid = (min(n_rows, _sm_count(x.device) * 4),)"), std::string::npos) << persistent;
  EXPECT_NE(persistent.find("NUM_STAGES=2, num_warps=8"), std::string::npos) << persistent;
  // Every setting of the space generates distinct source.
  std::set<std::string> sources;
  for (const auto& knobs : match.tmpl->Space().Enumerate()) sources.insert(match.tmpl->Generate(knobs));
  EXPECT_EQ(sources.size(), match.tmpl->Space().Enumerate().size());
  EXPECT_EQ(sources.size(), 3u * (1 + 3) + 3u * 3);  // row: warps x (plain + 3 stages); online: warps x blocks
}

TEST(TritonTemplate, WideRowsOnlyGetTheOnlineVariant) {
  auto match = MatchTemplateForTarget("triton", SoftmaxProblem(true, {4, 65536}), 1);
  ASSERT_TRUE(match.tmpl);
  for (const auto& knobs : match.tmpl->Space().Enumerate()) EXPECT_EQ(knobs.at("algorithm"), "online");
  const std::string src = match.tmpl->Generate(match.tmpl->Drafts().front());
  EXPECT_NE(src.find("_softmax_online[(n_rows,)](x, y, n_cols, BLOCK=4096, LOG=True, num_warps=8)"),
            std::string::npos) << src;
}

TEST(TritonTemplate, OperatorPicksTemplatesByTarget) {
  const core::Problem problem = SoftmaxProblem(false, {6, 50});
  operators::TemplateOperator cpu;
  operators::TemplateOperator triton("triton");
  operators::TemplateOperator cuda("cuda");
  EXPECT_EQ(cpu.Target(), "cpu");
  EXPECT_FALSE(triton.Unsupported(problem));
  EXPECT_FALSE(cuda.Unsupported(problem));  // cuda_reduction (cuda_template_test.cpp)
  operators::TemplateOperator other("metal");
  EXPECT_EQ(other.Unsupported(problem).value_or(""),
            "unsupported_target: metal (templates exist for cpu, triton and cuda)");
  operators::OperatorContext context;
  context.problem = &problem;
  const auto gpu_drafts = triton.Propose(context, 4);
  ASSERT_EQ(gpu_drafts.size(), 4u);
  for (const auto& c : gpu_drafts) {
    EXPECT_EQ(c.template_name, "triton_softmax_lastdim");
    EXPECT_NE(c.source.find("import triton"), std::string::npos);
  }
  const auto cpu_drafts = cpu.Propose(context, 1);
  ASSERT_EQ(cpu_drafts.size(), 1u);
  EXPECT_EQ(cpu_drafts[0].template_name, "softmax_lastdim");
}

TEST(TritonPlatform, RunnerAnswerBecomesRunResult) {
  nlohmann::json answer = {
      {"status", "ok"}, {"message", "ok"}, {"correct", true}, {"traceback", ""}, {"cuda_error", false},
      {"timing_note", ""},
      {"checks", {{{"seed_index", 0}, {"output", "output.0"}, {"passed", true}, {"max_abs_error", 1e-7},
                   {"max_rel_error", 2e-7}, {"mismatches", 0}, {"first_mismatch", -1}, {"atol", 1e-4},
                   {"rtol", 1e-4}, {"note", ""}}}},
      {"samples_us", {{"candidate", {10.0, 11.0, 12.0}}, {"candidate_dropin", {12.0, 13.0, 14.0}},
                      {"eager", {20.0, 21.0, 22.0}}}}};
  const platforms::RunResult r = platforms::triton::RunResultFromRunner(answer);
  EXPECT_EQ(r.status, core::Status::kOk);
  EXPECT_TRUE(r.correct);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_TRUE(r.checks[0].passed);
  EXPECT_EQ(r.kernel_only.n, 3);
  EXPECT_DOUBLE_EQ(r.kernel_only.median_us, 11.0);
  EXPECT_DOUBLE_EQ(r.latency.median_us, 13.0);

  answer["status"] = "rejected_by_check";
  answer["samples_us"] = nlohmann::json::object();
  answer["timing_note"] = "TRITON_INTERPRET=1";
  const platforms::RunResult rejected = platforms::triton::RunResultFromRunner(answer);
  EXPECT_EQ(rejected.status, core::Status::kRejectedByCheck);
  EXPECT_FALSE(rejected.latency.Measured());
  EXPECT_NE(rejected.log_excerpt.find("TRITON_INTERPRET=1"), std::string::npos);
  EXPECT_THROW(platforms::triton::RunResultFromRunner({{"message", "no status"}}), core::InvalidInputError);
}

TEST(TritonPlatform, LostRunnerStatusAndDeviceInfo) {
  EXPECT_EQ(platforms::triton::LostRunnerStatus("worker did not answer within 60 s (killed)"), core::Status::kTimeout);
  EXPECT_EQ(platforms::triton::LostRunnerStatus("worker killed by SIGSEGV (see log)"), core::Status::kCrash);
  const auto info = platforms::triton::DeviceInfoFromJson(
      {{"cuda", true}, {"device_name", "NVIDIA H200"}, {"l2_bytes", 62914560}, {"sm_count", 132}});
  EXPECT_TRUE(info.Usable());
  EXPECT_EQ(info.l2_bytes, 62914560);
  EXPECT_FALSE(platforms::triton::DeviceInfoFromJson({{"cuda", false}, {"interpret", false}}).Usable());
  EXPECT_TRUE(platforms::triton::DeviceInfoFromJson({{"cuda", false}, {"interpret", true}}).Usable());
  EXPECT_THROW(platforms::triton::DeviceInfoFromJson({{"device_name", "x"}}), core::InvalidInputError);
}

TEST(TritonPlatform, TargetValidation) {
  EXPECT_NO_THROW(cli::ValidateTarget("cpu"));
  EXPECT_NO_THROW(cli::ValidateTarget("triton"));
  EXPECT_NO_THROW(cli::ValidateTarget("cuda"));
  EXPECT_THROW(cli::ValidateTarget("tpu"), core::InvalidInputError);
}

}  // namespace
}  // namespace kernelevolve::template_test
