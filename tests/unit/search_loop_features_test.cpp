// Stop rules, the clean slate, context modes and resume bookkeeping of the search loop,
// with the fake operator and platform.
#include <gtest/gtest.h>

#include "search/termination.h"
#include "search_test_util.h"

namespace kernelevolve {
namespace {

using testing_util::FakeSearch;

core::Evaluation Scored(double fitness) {
  core::Evaluation e;
  e.status = fitness > 0 ? core::Status::kOk : core::Status::kCompileError;
  e.correct = fitness > 0;
  e.fitness = fitness;
  return e;
}

TEST(SearchProgressTest, SmallGainsAddUpToAnImprovement) {
  search::SearchProgress p(0.01);
  p.Record(Scored(0));
  EXPECT_EQ(p.SinceImprovement(), 1);
  p.Record(Scored(1.0));
  EXPECT_EQ(p.SinceImprovement(), 0);
  p.Record(Scored(1.006));  // +0.6%: not yet
  EXPECT_EQ(p.SinceImprovement(), 1);
  p.Record(Scored(1.011));  // +1.1% over the reference 1.0
  EXPECT_EQ(p.SinceImprovement(), 0);
  EXPECT_DOUBLE_EQ(p.best_fitness(), 1.011);
  p.Record(Scored(0.5));
  EXPECT_EQ(p.SinceImprovement(), 1);
  EXPECT_EQ(p.evaluations(), 5);
}

TEST(SearchProgressTest, StopRulesInOrder) {
  search::TerminationOptions o;
  o.budget = 10;
  o.time_limit_seconds = 100;
  o.stall_evaluations = 3;
  o.target_speedup = 2.0;
  search::SearchProgress p(0.01);
  p.Record(Scored(1.0));
  EXPECT_EQ(search::CheckTermination(o, p, 1), std::nullopt);
  EXPECT_EQ(search::CheckTermination(o, p, 100), "time_limit");
  for (int i = 0; i < 3; ++i) p.Record(Scored(1.005));
  EXPECT_EQ(search::CheckTermination(o, p, 1), "stall");
  p.Record(Scored(2.5));
  EXPECT_EQ(search::CheckTermination(o, p, 1), "target_reached");
  for (int i = 0; i < 5; ++i) p.Record(Scored(0));
  EXPECT_EQ(search::CheckTermination(o, p, 1), "budget");
}

class SearchLoopFeaturesTest : public testing_util::TempDirTest {};

TEST_F(SearchLoopFeaturesTest, TargetAndStallStopTheSearchWithTheirReason) {
  FakeSearch target;
  target.budget = 60;
  target.options.termination.target_speedup = 1.5;
  auto outcome = target.Run(dir_ / "target.db");
  EXPECT_EQ(outcome.stop_reason, "target_reached");
  EXPECT_LT(outcome.evaluations, 60);
  auto store = store::Store::Open(dir_ / "target.db");
  const auto nodes = store.LoadNodes(1);
  EXPECT_GE(nodes.back().evaluation.fitness, 1.5);  // the last node reached it

  FakeSearch stall;
  stall.budget = 200;
  stall.noise = 0;
  stall.script = [](const core::Candidate&) { return exec::FakeOutcome{core::Status::kOk, 50}; };
  stall.options.termination.stall_evaluations = 6;
  outcome = stall.Run(dir_ / "stall.db");
  EXPECT_EQ(outcome.stop_reason, "stall");
  EXPECT_EQ(outcome.evaluations, 7);  // the first improves, six more do not
}

TEST_F(SearchLoopFeaturesTest, StallTriggersACleanSlateDraftWithoutHistory) {
  FakeSearch search;
  search.budget = 30;
  search.noise = 0;
  search.options.drafts = 3;
  search.options.clean_slate_after = 4;
  // Everything takes 50 us except the first draft: nothing improves after node 1.
  search.script = [](const core::Candidate& c) {
    return exec::FakeOutcome{core::Status::kOk,
                             exec::FakeOperator::Point(c) == std::vector<int>{0, 0, 0} ? 10 : 50.0};
  };
  search.Run(dir_ / "clean.db");
  auto store = store::Store::Open(dir_ / "clean.db");
  int clean = 0;
  for (const auto& n : store.LoadNodes(1)) {
    if (n.candidate.rationale.rfind("clean slate after", 0) == 0) {
      ++clean;
      EXPECT_EQ(n.parent_id, -1);  // a fresh draft
    }
  }
  EXPECT_GE(clean, 4);  // about one per 4 evaluations without improvement
  EXPECT_LE(clean, 8);
}

/// What the operator was shown over a short greedy search in one context mode: the
/// most lineage and siblings any call saw, and whether every call with a parent was
/// marked clean.
struct Shown {
  size_t max_lineage = 0;
  size_t max_siblings = 0;
  bool all_clean = true;
  bool all_experiences = true;
  int with_parent = 0;
};

Shown ContextShown(const std::filesystem::path& db, search::ContextMode mode) {
  auto store = store::Store::Open(db);
  const int64_t run = store.CreateRun(store::RunRecord{});
  core::Problem problem = testing_util::FakeProblem();
  exec::FakeOperator op(3, 6);
  exec::FakePlatform platform(testing_util::GridLandscape);
  exec::LocalEvaluator evaluator(platform, problem, platforms::RunOptions{});
  search::GreedyPolicy policy;
  search::SearchOptions options;
  options.termination.budget = 15;
  options.drafts = 3;
  options.context = mode;
  options.clean_slate_after = -1;
  options.experiences = {"prior: 2.0x"};
  search::SearchLoop loop(problem, op, policy, evaluator, store, run, options);
  loop.Run();
  Shown shown;
  for (const auto& seen : op.history()) {
    shown.all_experiences = shown.all_experiences && seen.experiences == 1;
    if (seen.parent_id < 0) continue;
    ++shown.with_parent;
    shown.max_lineage = std::max(shown.max_lineage, seen.lineage);
    shown.max_siblings = std::max(shown.max_siblings, seen.siblings);
    shown.all_clean = shown.all_clean && seen.clean_slate;
  }
  return shown;
}

TEST_F(SearchLoopFeaturesTest, ContextModesDecideWhatTheOperatorSees) {
  const Shown both = ContextShown(dir_ / "both.db", search::ContextMode::kBoth);
  EXPECT_GT(both.with_parent, 5);
  EXPECT_GE(both.max_lineage, 2u);  // a child's trajectory: its draft, ..., itself
  EXPECT_GE(both.max_siblings, 1u);
  EXPECT_FALSE(both.all_clean);
  EXPECT_TRUE(both.all_experiences);
  const Shown inherit = ContextShown(dir_ / "inherit.db", search::ContextMode::kInherit);
  EXPECT_EQ(inherit.max_lineage, both.max_lineage);
  EXPECT_EQ(inherit.max_siblings, 0u);
  const Shown siblings = ContextShown(dir_ / "siblings.db", search::ContextMode::kSiblings);
  EXPECT_EQ(siblings.max_lineage, 0u);
  EXPECT_EQ(siblings.max_siblings, both.max_siblings);
  const Shown clean = ContextShown(dir_ / "clean.db", search::ContextMode::kClean);
  EXPECT_GT(clean.with_parent, 5);  // still told which node to improve
  EXPECT_EQ(clean.max_lineage, 0u);
  EXPECT_EQ(clean.max_siblings, 0u);
  EXPECT_TRUE(clean.all_clean);
  EXPECT_THROW(search::ContextModeFromName("all"), core::InvalidInputError);
  EXPECT_EQ(search::ContextModeName(search::ContextModeFromName("siblings")), "siblings");
}

TEST_F(SearchLoopFeaturesTest, ResumeKeepsSeedsDraftsAndPolicyAndRefusesAnotherPolicy) {
  FakeSearch search;
  search.policy = "mcts";
  search.budget = 15;
  search.options.drafts = 5;
  exec::FakeOperator maker(3, 6);
  search.options.seed_candidates = {maker.Make({5, 5, 5}, "seed")};
  search.eval_crash_at = 3;  // killed during the draft phase
  EXPECT_THROW(search.Run(dir_ / "r.db"), std::runtime_error);
  {
    auto store = store::Store::Open(dir_ / "r.db");
    EXPECT_EQ(store.LoadNodes(1).size(), 2u);
    EXPECT_EQ(store.LoadPending(1).size(), 4u);  // 1 seed + 5 drafts - 2 evaluated
    EXPECT_TRUE(store.LoadSearchState(1).has_value());
  }
  FakeSearch wrong = search;
  wrong.policy = "greedy";
  wrong.eval_crash_at = 0;
  EXPECT_THROW(wrong.Run(dir_ / "r.db"), core::InvalidInputError);
  search.eval_crash_at = 0;
  auto outcome = search.Run(dir_ / "r.db");
  EXPECT_EQ(outcome.resumed_evaluations, 2);
  EXPECT_EQ(outcome.requeued, 4);
  EXPECT_EQ(outcome.evaluations, 15);
  auto store = store::Store::Open(dir_ / "r.db");
  const auto nodes = store.LoadNodes(1);
  EXPECT_EQ(nodes.front().candidate.rationale, "seed");
  int drafts = 0;
  for (const auto& n : nodes) drafts += n.parent_id == -1 ? 1 : 0;
  EXPECT_GE(drafts, 6);  // the seed and the five drafts were evaluated, none twice
  EXPECT_TRUE(store.LoadPending(1).empty());
}

}  // namespace
}  // namespace kernelevolve
