// SearchOptions::seed_candidates (warm start, issue 8) are evaluated first, before the
// operator's drafts, and SearchOptions::experiences reach every OperatorContext.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>

#include <fmt/format.h>

#include "search/search_loop.h"
#include "search/selection_policy.h"
#include "store/store.h"

namespace kernelevolve {
namespace {

/// Drafts "d0", "d1", "d2"; children of X are "X.1", "X.2". Records the experiences it saw.
class RecordingOperator : public operators::UniversalOperator {
 public:
  std::string Name() const override { return "recording"; }
  std::optional<std::string> Unsupported(const core::Problem&) const override { return std::nullopt; }
  std::vector<core::Candidate> Propose(const operators::OperatorContext& ctx, int n) override {
    seen_experiences.push_back(ctx.experiences);
    std::vector<std::string> names;
    if (ctx.parent == nullptr) {
      names = {"d0", "d1", "d2"};
    } else if (ctx.parent->candidate.rationale.size() < 6) {
      names = {ctx.parent->candidate.rationale + ".1", ctx.parent->candidate.rationale + ".2"};
    }
    std::vector<core::Candidate> out;
    for (const auto& name : names) {
      core::Candidate c;
      c.source = "// " + name + "\n";
      c.rationale = name;
      c.operator_name = "recording";
      if (ctx.seen_hashes && ctx.seen_hashes->count(core::ContentHash(c.source))) continue;
      out.push_back(c);
      if (static_cast<int>(out.size()) >= n) break;
    }
    return out;
  }
  std::vector<std::vector<std::string>> seen_experiences;
};

/// Fitness by name: the seed is the best kernel.
class NamedEvaluator : public exec::Evaluator {
 public:
  core::Evaluation Evaluate(const core::Candidate& c) override {
    order.push_back(c.rationale);
    core::Evaluation e;
    e.status = core::Status::kOk;
    e.correct = true;
    e.fitness = c.rationale == "seed" ? 3.0 : 1.0 + 0.1 * static_cast<double>(order.size());
    e.speedup_vs_eager.value = e.fitness;
    return e;
  }
  std::vector<std::string> order;
};

class SearchSeedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "ke_seed_test_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

core::Candidate Seed(const std::string& name, const std::string& source) {
  core::Candidate c;
  c.source = source;
  c.rationale = name;
  c.operator_name = "recording";
  return c;
}

TEST_F(SearchSeedTest, SeedsAreEvaluatedFirstAndDuplicateDraftsAreSkipped) {
  auto store = store::Store::Open(dir_ / "db.sqlite");
  const int64_t run_id = store.CreateRun(store::RunRecord{});
  core::Problem problem;
  RecordingOperator op;
  NamedEvaluator evaluator;
  search::GreedyPolicy policy;
  search::SearchOptions options;
  options.termination.budget = 6;
  options.drafts = 3;
  // The second seed has the same source as the operator's draft "d1": evaluated once.
  options.seed_candidates = {Seed("seed", "// prior best\n"), Seed("seed-d1", "// d1\n")};
  options.experiences = {"softmax_lastdim on cpu: 3.00x", "another"};
  search::SearchLoop loop(problem, op, policy, evaluator, store, run_id, options);
  const auto outcome = loop.Run();

  ASSERT_GE(evaluator.order.size(), 4u);
  EXPECT_EQ(evaluator.order[0], "seed");
  EXPECT_EQ(evaluator.order[1], "seed-d1");
  EXPECT_EQ(evaluator.order[2], "d0");
  EXPECT_EQ(evaluator.order[3], "d2");  // "d1" was already evaluated as a seed
  EXPECT_EQ(outcome.evaluations, 6);
  EXPECT_EQ(loop.tree().Get(outcome.best_node_id).candidate.rationale, "seed");
  EXPECT_EQ(loop.tree().Nodes().front().parent_id, search::kRootId);  // seeds are drafts
  EXPECT_EQ(evaluator.order[4], "seed.1");  // greedy refines the seed next
  ASSERT_FALSE(op.seen_experiences.empty());
  for (const auto& e : op.seen_experiences) EXPECT_EQ(e, options.experiences);
}

TEST_F(SearchSeedTest, WithoutSeedsTheOperatorDraftsComeFirst) {
  auto store = store::Store::Open(dir_ / "db.sqlite");
  const int64_t run_id = store.CreateRun(store::RunRecord{});
  core::Problem problem;
  RecordingOperator op;
  NamedEvaluator evaluator;
  search::GreedyPolicy policy;
  search::SearchOptions options;
  options.termination.budget = 3;
  options.drafts = 3;
  search::SearchLoop loop(problem, op, policy, evaluator, store, run_id, options);
  loop.Run();
  EXPECT_EQ(evaluator.order, (std::vector<std::string>{"d0", "d1", "d2"}));
  for (const auto& e : op.seen_experiences) EXPECT_TRUE(e.empty());
}

}  // namespace
}  // namespace kernelevolve
