// The search loop with a scripted operator and evaluator (no compiler, no worker).
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <unistd.h>

#include <fmt/format.h>

#include "search/search_loop.h"
#include "search/selection_policy.h"
#include "search_test_util.h"
#include "store/store.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

// Proposes candidates named by an integer "k": drafts 0..num_drafts-1, then children
// of node with k = p are 10*p+1 .. 10*p+children_per_node. A finite space.
class ScriptedOperator : public operators::UniversalOperator {
 public:
  ScriptedOperator(int num_drafts, int children_per_node)
      : num_drafts_(num_drafts), children_(children_per_node) {}
  std::string Name() const override { return "scripted"; }
  std::optional<std::string> Unsupported(const core::Problem&) const override { return std::nullopt; }
  std::vector<core::Candidate> Propose(const operators::OperatorContext& ctx, int n) override {
    std::vector<int> ks;
    if (!ctx.parent) {
      for (int i = 0; i < num_drafts_; ++i) ks.push_back(i);
    } else {
      int p = ctx.parent->candidate.knobs.at("k").get<int>();
      if (p >= 1000) return {};  // leaves of the finite space
      for (int i = 1; i <= children_; ++i) ks.push_back(10 * p + i);
    }
    std::vector<core::Candidate> out;
    for (int k : ks) {
      core::Candidate c;
      c.source = fmt::format("// candidate {}\n", k);
      c.knobs = {{"k", k}};
      c.template_name = "scripted";
      c.operator_name = "scripted";
      c.rationale = fmt::format("k={}", k);
      if (ctx.seen_hashes && ctx.seen_hashes->count(core::ContentHash(c.source))) continue;
      out.push_back(std::move(c));
      if (static_cast<int>(out.size()) >= n) break;
    }
    return out;
  }

 private:
  int num_drafts_;
  int children_;
};

// Fitness is a scripted function of k; k in `failing` fails to compile.
class ScriptedEvaluator : public exec::Evaluator {
 public:
  explicit ScriptedEvaluator(std::function<double(int)> fitness) : fitness_(std::move(fitness)) {}
  core::Evaluation Evaluate(const core::Candidate& c) override {
    int k = c.knobs.at("k").get<int>();
    evaluated.push_back(k);
    core::Evaluation e;
    double f = fitness_(k);
    if (f <= 0) {
      e.status = core::Status::kCompileError;
      e.message = "scripted failure";
      return e;
    }
    return testing_util::OkEvaluation(f, 0.9, 1.1);
  }
  std::vector<int> evaluated;

 private:
  std::function<double(int)> fitness_;
};

class SearchLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("ke_search_{}_{}", ::getpid(),
                                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  search::SearchOutcome RunSearch(ScriptedOperator& op, ScriptedEvaluator& ev, int budget,
                                  int drafts, std::vector<search::Node>* nodes = nullptr,
                                  double time_limit = 600) {
    auto store = store::Store::Open(dir_ / fmt::format("db{}.sqlite", runs_++));
    store::RunRecord run;
    run.problem = "scripted";
    int64_t run_id = store.CreateRun(run);
    search::GreedyPolicy policy;
    search::SearchOptions options;
    options.termination.budget = budget;
    options.termination.time_limit_seconds = time_limit;
    options.drafts = drafts;
    core::Problem problem;
    search::SearchLoop loop(problem, op, policy, ev, store, run_id, options);
    auto outcome = loop.Run();
    if (nodes) *nodes = store.LoadNodes(run_id);
    return outcome;
  }

  fs::path dir_;
  int runs_ = 0;
};

TEST_F(SearchLoopTest, StopsAtBudgetAndCommitsEveryNode) {
  ScriptedOperator op(3, 5);
  ScriptedEvaluator ev([](int k) { return 1.0 + k % 7; });
  std::vector<search::Node> nodes;
  auto outcome = RunSearch(op, ev, 12, 3, &nodes);
  EXPECT_EQ(outcome.stop_reason, "budget");
  EXPECT_EQ(outcome.evaluations, 12);
  EXPECT_EQ(nodes.size(), 12u);
  EXPECT_EQ(ev.evaluated.size(), 12u);
}

TEST_F(SearchLoopTest, GreedyExpandsTheBestDraftFirst) {
  ScriptedOperator op(3, 2);
  // Draft 1 is the best; its children are 11 and 12.
  ScriptedEvaluator ev([](int k) { return k == 1 ? 3.0 : 1.0 + 0.01 * k; });
  std::vector<search::Node> nodes;
  RunSearch(op, ev, 4, 3, &nodes);
  ASSERT_EQ(ev.evaluated.size(), 4u);
  EXPECT_EQ((std::vector<int>(ev.evaluated.begin(), ev.evaluated.begin() + 3)), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(ev.evaluated[3], 11);
  EXPECT_EQ(nodes[3].parent_id, nodes[1].id);
  EXPECT_EQ(nodes[3].depth, 2);
}

TEST_F(SearchLoopTest, StopsWhenTheSpaceIsExhausted) {
  ScriptedOperator op(2, 1);  // drafts 0,1; children 1 -> 11 -> 111 ... a chain, 0 -> 1 (dup)
  ScriptedEvaluator ev([](int k) { return k >= 1000 ? 0.0 : 1.0 + (k % 3); });
  std::vector<search::Node> nodes;
  auto outcome = RunSearch(op, ev, 100, 2, &nodes);
  EXPECT_EQ(outcome.stop_reason, "exhausted");
  EXPECT_LT(outcome.evaluations, 100);
  // No source evaluated twice.
  std::set<std::string> hashes;
  for (const auto& n : nodes) EXPECT_TRUE(hashes.insert(n.source_hash).second) << n.source_hash;
}

TEST_F(SearchLoopTest, RepairsFailuresWhenNothingIsCorrect) {
  ScriptedOperator op(2, 2);
  // Drafts fail; children of the newest failure (k=1: 11, 12) succeed.
  ScriptedEvaluator ev([](int k) { return k < 10 ? 0.0 : 2.0; });
  std::vector<search::Node> nodes;
  auto outcome = RunSearch(op, ev, 3, 2, &nodes);
  ASSERT_EQ(ev.evaluated.size(), 3u);
  EXPECT_EQ(ev.evaluated[2], 11);
  EXPECT_EQ(nodes[2].parent_id, nodes[1].id);
  ASSERT_GE(outcome.best_node_id, 0);
}

TEST_F(SearchLoopTest, ReportsNoBestWhenEverythingFails) {
  ScriptedOperator op(2, 2);
  ScriptedEvaluator ev([](int) { return 0.0; });
  auto outcome = RunSearch(op, ev, 6, 2);
  EXPECT_EQ(outcome.best_node_id, -1);
  EXPECT_EQ(outcome.evaluations, 6);
}

TEST_F(SearchLoopTest, TimeLimitStopsTheSearch) {
  ScriptedOperator op(3, 3);
  ScriptedEvaluator ev([](int) { return 1.5; });
  auto outcome = RunSearch(op, ev, 50, 3, nullptr, /*time_limit=*/0.0);
  EXPECT_EQ(outcome.stop_reason, "time_limit");
  EXPECT_EQ(outcome.evaluations, 0);
}

TEST_F(SearchLoopTest, SameInputsGiveTheSameTree) {
  auto fitness = [](int k) { return 1.0 + ((k * 37) % 11) / 10.0; };
  ScriptedOperator op1(3, 3), op2(3, 3);
  ScriptedEvaluator ev1(fitness), ev2(fitness);
  std::vector<search::Node> a, b;
  RunSearch(op1, ev1, 15, 3, &a);
  RunSearch(op2, ev2, 15, 3, &b);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].source_hash, b[i].source_hash);
    EXPECT_EQ(a[i].parent_id, b[i].parent_id);
  }
}

}  // namespace
}  // namespace kernelevolve
