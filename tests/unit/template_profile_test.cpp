// Issue 6: a parent's Nsight Compute profile (taken during the search) steers the
// template operator's next candidate (knob moves and rationale, DiagnoseWithProfile)
// and reaches the LLM operator's context memory.
#include <gtest/gtest.h>

#include "operators/llm/context_memory.h"
#include "operators/template/template_operator.h"
#include "profile_test_util.h"
#include "template_test_util.h"

namespace kernelevolve::template_test {
namespace {

using nlohmann::json;

core::Problem RowSoftmax() {
  GraphBuilder g({4, 256});
  g.Input("x");
  g.Call("out", "aten._softmax.default", {Ref("self", "x"), Val("dim", -1), Val("half_to_float", false)});
  return g.Finish("out");
}

/// A correct parent: the Triton row-softmax draft with 4 warps, not persistent.
search::Node TritonParent(const core::Problem& problem) {
  operators::TemplateOperator op("triton");
  operators::OperatorContext context;
  context.problem = &problem;
  search::Node parent;
  for (core::Candidate& c : op.Propose(context, 64)) {
    if (c.knobs.value("algorithm", "") == "row" && c.knobs.value("num_warps", 0) == 4 &&
        c.knobs.value("persistent", "") == "no") {
      parent.candidate = std::move(c);
    }
  }
  EXPECT_FALSE(parent.candidate.source.empty()) << "no row/4 warps/not persistent setting";
  parent.id = 7;
  parent.source_hash = core::ContentHash(parent.candidate.source);
  parent.evaluation.status = core::Status::kOk;
  parent.evaluation.correct = true;
  parent.evaluation.fitness = 1.2;
  parent.evaluation.speedup_vs_eager.value = 1.2;
  parent.evaluation.latency.median_us = 40;
  return parent;
}

std::vector<core::Candidate> Children(const core::Problem& problem, const search::Node& parent, int n) {
  operators::TemplateOperator op("triton");
  operators::OperatorContext context;
  context.problem = &problem;
  context.parent = &parent;
  return op.Propose(context, n);
}

TEST(TemplateProfile, HighRegistersMoveToMoreWarpsAndSayWhy) {
  const core::Problem problem = RowSoftmax();
  search::Node parent = TritonParent(problem);
  const auto plain = Children(problem, parent, 1);
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].rationale.find("ncu"), std::string::npos) << plain[0].rationale;

  parent.profile = testing_util::OkNcuProfile(30, 45, 60, std::nullopt, 200);
  const auto steered = Children(problem, parent, 2);
  ASSERT_EQ(steered.size(), 2u);
  EXPECT_EQ(steered[0].knobs.at("num_warps"), 8) << steered[0].knobs.dump();
  EXPECT_EQ(steered[1].knobs.at("num_warps"), 16) << steered[1].knobs.dump();
  for (const auto& c : steered) {
    EXPECT_EQ(c.knobs.at("algorithm"), "row");
    EXPECT_NE(c.rationale.find("200 registers/thread"), std::string::npos) << c.rationale;  // the ncu line
    EXPECT_NE(c.rationale.find("200 registers per thread cap occupancy: more warps per block"),
              std::string::npos)
        << c.rationale;
  }
}

TEST(TemplateProfile, LowDramAndOccupancyAskForMoreWarpsOrAPersistentGrid) {
  const core::Problem problem = RowSoftmax();
  search::Node parent = TritonParent(problem);
  parent.profile = testing_util::OkNcuProfile(30, 30, 20, std::nullopt, 32);
  const auto steered = Children(problem, parent, 3);
  ASSERT_EQ(steered.size(), 3u);
  EXPECT_EQ(steered[0].knobs.at("num_warps"), 8);
  EXPECT_EQ(steered[1].knobs.at("num_warps"), 16);
  EXPECT_EQ(steered[2].knobs.at("persistent"), "yes");
  EXPECT_NE(steered[0].rationale.find("low DRAM throughput and low occupancy"), std::string::npos)
      << steered[0].rationale;
  EXPECT_NE(steered[0].rationale.find("DRAM 30% of peak"), std::string::npos) << steered[0].rationale;
}

TEST(TemplateProfile, AFailedProfileKeepsThePlainProposal) {
  const core::Problem problem = RowSoftmax();
  search::Node parent = TritonParent(problem);
  const auto plain = Children(problem, parent, 2);
  parent.profile = core::KernelProfile{};
  parent.profile->status = "failed";
  parent.profile->note = "ncu: timed out";
  const auto same = Children(problem, parent, 2);
  ASSERT_EQ(plain.size(), same.size());
  for (size_t i = 0; i < plain.size(); ++i) {
    EXPECT_EQ(plain[i].knobs, same[i].knobs);
    EXPECT_EQ(plain[i].rationale, same[i].rationale);
  }
}

TEST(TemplateProfile, ContextMemoryCarriesTheCounters) {
  const core::Problem problem = RowSoftmax();
  search::Node node = TritonParent(problem);
  const std::string without = operators::llm::Diagnose(node, problem).details;
  EXPECT_EQ(without.find("Nsight Compute"), std::string::npos) << without;
  node.profile = testing_util::OkNcuProfile(30, 30, 20, std::nullopt, 32);
  const auto d = operators::llm::Diagnose(node, problem);
  EXPECT_NE(d.details.find("Hardware counters (Nsight Compute): ncu: 30.0 us in 1 kernel, DRAM 30% of peak"),
            std::string::npos)
      << d.details;
  EXPECT_NE(d.details.find("low DRAM throughput and low occupancy: more warps / rows per program"),
            std::string::npos)
      << d.details;
  node.profile->status = "timeout";  // not ok: nothing added
  EXPECT_EQ(operators::llm::Diagnose(node, problem).details, without);
}

}  // namespace
}  // namespace kernelevolve::template_test
