// Profiles during the search (issue 6, --profile-during): the loop's profiler hook is
// called on the parent about to be expanded, only when it is correct, within the budget,
// never while a candidate is in flight; its result reaches the store, the tree, the
// operator and a resumed search; a throwing or hopeless profiler does not stop the run.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>

#include "exec/fake_operator.h"
#include "profile_test_util.h"
#include "search/search_loop.h"
#include "search/selection_policy.h"
#include "search_test_util.h"
#include "store/store.h"

namespace kernelevolve {
namespace {

using testing_util::TempDirTest;

/// Fitness grows with the grid point's sum; points with sum % 5 == 4 are incorrect (or
/// every point with `all_fail`). Counts evaluations running at once.
class CountingEvaluator : public exec::Evaluator {
 public:
  explicit CountingEvaluator(bool all_fail = false, double sleep_seconds = 0)
      : all_fail_(all_fail), sleep_seconds_(sleep_seconds) {}
  core::Evaluation Evaluate(const core::Candidate& c) override {
    ++active;
    if (sleep_seconds_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(sleep_seconds_));
    int sum = 0;
    for (int v : exec::FakeOperator::Point(c)) sum += v;
    core::Evaluation e;
    if (all_fail_ || sum % 5 == 4) {
      e.status = core::Status::kIncorrect;
      e.message = "scripted mismatch";
    } else {
      e = testing_util::OkEvaluation(1.0 + 0.1 * sum, 0.95, 1.05);
    }
    --active;
    return e;
  }
  std::atomic<int> active{0};

 private:
  bool all_fail_;
  double sleep_seconds_;
};

/// Records, per Propose call with a parent, whether the parent carried a profile.
class RecordingOperator : public exec::FakeOperator {
 public:
  RecordingOperator() : exec::FakeOperator(3, 5) {}
  std::vector<core::Candidate> Propose(const operators::OperatorContext& context, int n) override {
    if (context.parent && context.parent->profile) with_profile.insert(context.parent->id);
    return exec::FakeOperator::Propose(context, n);
  }
  std::set<int64_t> with_profile;
};

/// Candidates handed to the evaluators minus those committed: the pool's in-flight count.
class InFlightObserver : public search::SearchObserver {
 public:
  void OnProposed(int, const core::Candidate&) override { ++proposed; }
  void OnEvaluated(const search::Node&, const search::Tree&, double) override { ++evaluated; }
  int InFlight() const { return proposed - evaluated; }
  int proposed = 0;
  int evaluated = 0;
};

class SearchProfileTest : public TempDirTest {
 protected:
  /// One search (or a resume of it: same db) with `profiler`; returns the outcome and
  /// keeps the final tree's nodes in `nodes_`.
  search::SearchOutcome Run(search::SearchOptions options, CountingEvaluator& evaluator,
                            int budget, int jobs = 1, int drafts = 3) {
    auto store = store::Store::Open(dir_ / "search.db");
    int64_t run_id = 1;
    if (store.ListRuns().empty()) run_id = store.CreateRun(store::RunRecord{});
    core::Problem problem = testing_util::FakeProblem();
    search::GreedyPolicy policy;
    options.termination.budget = budget;
    options.jobs = jobs;
    options.drafts = drafts;
    options.clean_slate_after = -1;
    search::SearchLoop loop(problem, op_, policy, evaluator, store, run_id, options, &observer_);
    search::SearchOutcome outcome = loop.Run();
    nodes_ = loop.tree().Nodes();
    return outcome;
  }

  /// A profiler recording the nodes it is given and what was in flight then.
  search::SearchOptions Profiling(int budget, CountingEvaluator& evaluator) {
    search::SearchOptions options;
    options.profile_budget = budget;
    options.profiler = [this, &evaluator](const search::Node& node) {
      profiled_.push_back(node.id);
      EXPECT_TRUE(node.evaluation.correct) << node.id;
      EXPECT_EQ(node.evaluation.status, core::Status::kOk) << node.id;
      EXPECT_FALSE(node.profile.has_value()) << node.id;
      EXPECT_EQ(observer_.InFlight(), 0) << "profiled node " << node.id << " beside a candidate";
      EXPECT_EQ(evaluator.active.load(), 0) << node.id;
      return testing_util::OkNcuProfile(50, std::nullopt, std::nullopt, std::nullopt,
                                        100 + static_cast<double>(node.id));
    };
    return options;
  }

  std::set<int64_t> Parents() const {
    std::set<int64_t> parents;
    for (const auto& n : nodes_) parents.insert(n.parent_id);
    return parents;
  }

  RecordingOperator op_;
  InFlightObserver observer_;
  std::vector<int64_t> profiled_;
  std::vector<search::Node> nodes_;
};

TEST_F(SearchProfileTest, ProfilesExpandedCorrectParentsWithinTheBudget) {
  CountingEvaluator evaluator;
  auto outcome = Run(Profiling(2, evaluator), evaluator, 16);
  EXPECT_EQ(outcome.stop_reason, "budget");
  ASSERT_EQ(profiled_.size(), 2u);  // greedy expands more than two correct parents in 16
  EXPECT_NE(profiled_[0], profiled_[1]);
  const std::set<int64_t> parents = Parents();
  auto store = store::Store::Open(dir_ / "search.db");
  for (int64_t id : profiled_) {
    EXPECT_TRUE(parents.count(id)) << "node " << id << " was profiled but never expanded";
    EXPECT_TRUE(op_.with_profile.count(id)) << "the operator never saw node " << id << "'s profile";
    auto stored = store.LoadProfile(id);
    ASSERT_TRUE(stored) << id;
    EXPECT_EQ(stored->total.registers_per_thread, 100 + static_cast<double>(id));
  }
  int on_tree = 0;
  for (const auto& n : nodes_) on_tree += n.profile.has_value();
  EXPECT_EQ(on_tree, 2);
}

TEST_F(SearchProfileTest, IncorrectParentsAreNeverProfiled) {
  CountingEvaluator evaluator(/*all_fail=*/true);
  Run(Profiling(4, evaluator), evaluator, 8);
  EXPECT_GT(Parents().size(), 1u);  // failures were expanded (repairs)
  EXPECT_TRUE(profiled_.empty());
}

TEST_F(SearchProfileTest, NoProfilerOrNoBudgetMeansNoProfile) {
  CountingEvaluator evaluator;
  search::SearchOptions options = Profiling(0, evaluator);
  Run(options, evaluator, 10);
  EXPECT_TRUE(profiled_.empty());
  for (const auto& n : nodes_) EXPECT_FALSE(n.profile) << n.id;
}

TEST_F(SearchProfileTest, WithTwoJobsNothingIsProfiledBesideACandidate) {
  // Greedy with two jobs keeps a candidate in flight almost always; whatever the
  // profiler is called on, nothing was in flight then (its EXPECTs), and the root
  // (drafts) is never profiled.
  CountingEvaluator evaluator(false, 0.003);
  auto outcome = Run(Profiling(4, evaluator), evaluator, 12, /*jobs=*/2, /*drafts=*/1);
  EXPECT_EQ(outcome.evaluations, 12);
  EXPECT_LE(profiled_.size(), 4u);
}

/// Greedy, but selects nothing while a candidate is pending: with two jobs the search
/// drains before every expansion, so each expansion may be profiled.
class DrainingPolicy : public search::GreedyPolicy {
 public:
  std::vector<int64_t> Select(const search::Tree& tree, int k) override {
    if (!tree.Pending().empty()) return {};
    return search::GreedyPolicy::Select(tree, k);
  }
};

TEST_F(SearchProfileTest, WithTwoJobsProfilesWhenTheSearchHasDrained) {
  CountingEvaluator evaluator(false, 0.003);
  auto store = store::Store::Open(dir_ / "search.db");
  const int64_t run_id = store.CreateRun(store::RunRecord{});
  core::Problem problem = testing_util::FakeProblem();
  DrainingPolicy policy;
  search::SearchOptions options = Profiling(2, evaluator);
  options.termination.budget = 12;
  options.jobs = 2;
  options.drafts = 2;
  search::SearchLoop loop(problem, op_, policy, evaluator, store, run_id, options, &observer_);
  EXPECT_EQ(loop.Run().evaluations, 12);
  EXPECT_EQ(profiled_.size(), 2u);  // (the profiler's EXPECTs: nothing in flight at each call)
}

TEST_F(SearchProfileTest, AThrowingProfilerGivesAFailedProfileAndTheSearchGoesOn) {
  CountingEvaluator evaluator;
  search::SearchOptions options;
  options.profile_budget = 2;
  int calls = 0;
  options.profiler = [&calls](const search::Node&) -> core::KernelProfile {
    ++calls;
    throw std::runtime_error("ncu exploded");
  };
  auto outcome = Run(options, evaluator, 12);
  EXPECT_EQ(outcome.stop_reason, "budget");
  EXPECT_EQ(outcome.evaluations, 12);
  EXPECT_EQ(calls, 2);
  int failed = 0;
  auto store = store::Store::Open(dir_ / "search.db");
  for (const auto& n : nodes_) {
    if (!n.profile) continue;
    ++failed;
    EXPECT_EQ(n.profile->status, "failed");
    EXPECT_NE(n.profile->note.find("ncu exploded"), std::string::npos) << n.profile->note;
    EXPECT_EQ(store.LoadProfile(n.id)->status, "failed");
  }
  EXPECT_EQ(failed, 2);
}

TEST_F(SearchProfileTest, AHopelessProfileStopsProfilingForTheRun) {
  CountingEvaluator evaluator;
  search::SearchOptions options;
  options.profile_budget = 5;
  int calls = 0;
  options.profiler = [&calls](const search::Node&) {
    ++calls;
    core::KernelProfile p;
    p.status = "unavailable";
    p.note = "ncu not found";
    return p;
  };
  Run(options, evaluator, 14);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(search::ProfilerUnusable(core::KernelProfile{}));  // "skipped"
  EXPECT_FALSE(search::ProfilerUnusable(
      testing_util::OkNcuProfile(50, std::nullopt, std::nullopt, std::nullopt, 32)));
}

TEST_F(SearchProfileTest, AResumedSearchKeepsItsProfilesAndTheirBudget) {
  CountingEvaluator evaluator;
  Run(Profiling(1, evaluator), evaluator, 6);
  ASSERT_EQ(profiled_.size(), 1u);
  const int64_t first = profiled_.front();
  // Same run, larger budget: the restored profile is on its node and uses up budget 1.
  Run(Profiling(1, evaluator), evaluator, 12);
  EXPECT_EQ(profiled_.size(), 1u);
  ASSERT_EQ(nodes_.size(), 12u);
  bool found = false;
  for (const auto& n : nodes_) {
    if (n.id != first) continue;
    found = true;
    ASSERT_TRUE(n.profile);
    EXPECT_EQ(n.profile->total.registers_per_thread, 100 + static_cast<double>(first));
  }
  EXPECT_TRUE(found);
  // With budget left, a further resume profiles one more node, never the first again.
  Run(Profiling(2, evaluator), evaluator, 18);
  ASSERT_LE(profiled_.size(), 2u);
  if (profiled_.size() == 2u) EXPECT_NE(profiled_[1], first);
}

}  // namespace
}  // namespace kernelevolve
