// --jobs N: candidates in flight, builds in parallel, timed runs never overlapping, the
// budget exact, and a crash with several in flight resumes without loss or repeats.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "exec/evaluation_pool.h"
#include "search_test_util.h"

namespace kernelevolve {
namespace {

using testing_util::FakeSearch;

class SearchParallelTest : public testing_util::TempDirTest {};

void ExpectSoundTree(const std::filesystem::path& db, size_t expected_nodes) {
  auto store = store::Store::Open(db);
  const auto nodes = store.LoadNodes(1);
  EXPECT_EQ(nodes.size(), expected_nodes);
  std::set<int64_t> ids;
  std::set<std::string> hashes;
  for (const auto& n : nodes) {
    EXPECT_TRUE(n.parent_id == -1 || ids.count(n.parent_id)) << n.id;
    EXPECT_TRUE(hashes.insert(n.source_hash).second) << "evaluated twice: node " << n.id;
    ids.insert(n.id);
  }
  EXPECT_TRUE(store.LoadPending(1).empty());
}

TEST_F(SearchParallelTest, BuildsOverlapTimedRunsNeverDo) {
  for (const std::string policy : {"greedy", "mcts", "random"}) {
    FakeSearch search;
    search.policy = policy;
    search.budget = 16;
    search.jobs = 4;
    search.platform_options.build_seconds = 0.01;
    search.platform_options.run_seconds = 0.005;
    auto outcome = search.Run(dir_ / (policy + ".db"));
    EXPECT_EQ(outcome.stop_reason, "budget") << policy;
    EXPECT_EQ(outcome.evaluations, 16) << policy;
    EXPECT_EQ(search.peak_runs, 1) << policy;      // one measurement slot
    EXPECT_EQ(search.overlaps, 0) << policy;       // exclusive: no compile beside a run
    EXPECT_GE(search.peak_builds, 2) << policy;    // but compiles run side by side
    ExpectSoundTree(dir_ / (policy + ".db"), 16);
  }
}

TEST_F(SearchParallelTest, RunsOnlyIsolationLetsCompilesOverlapRuns) {
  core::Problem problem = testing_util::FakeProblem();
  exec::FakePlatform platform(testing_util::GridLandscape,
                              exec::FakePlatformOptions{0, 0, 0.02, 0.02});
  exec::MeasurementGate gate(exec::TimingIsolation::kRunsOnly);
  exec::GatedPlatform gated(platform, gate);
  exec::LocalEvaluator evaluator(gated, problem, platforms::RunOptions{});
  exec::EvaluationPool pool(evaluator, 4);
  exec::FakeOperator op(3, 6);
  for (int i = 0; i < 12; ++i) pool.Submit(i, op.Make({i % 6, i / 6, 0}, "x"));
  std::set<int64_t> tickets;
  while (pool.InFlight() > 0) tickets.insert(pool.WaitAny().ticket);
  EXPECT_EQ(tickets.size(), 12u);
  EXPECT_EQ(platform.peak_concurrent_runs(), 1);
  EXPECT_GT(platform.build_run_overlaps(), 0);
  EXPECT_THROW(exec::TimingIsolationFromName("none"), core::InvalidInputError);
}

TEST_F(SearchParallelTest, EvaluatorErrorsReachTheLoopThread) {
  class Failing : public exec::Evaluator {
   public:
    core::Evaluation Evaluate(const core::Candidate&) override {
      throw core::IoError("worker lost");
    }
  } failing;
  exec::EvaluationPool pool(failing, 2);
  pool.Submit(1, core::Candidate{});
  EXPECT_THROW(pool.WaitAny(), core::IoError);
  EXPECT_THROW(pool.WaitAny(), core::InternalError);  // nothing in flight
}

TEST_F(SearchParallelTest, CrashWithSeveralInFlightResumesWithoutLossOrRepeats) {
  for (const std::string policy : {"ucb1", "evolutionary"}) {
    const auto db = dir_ / (policy + "_crash.db");
    FakeSearch search;
    search.policy = policy;
    search.budget = 20;
    search.jobs = 3;
    search.platform_options.build_seconds = 0.002;
    search.eval_crash_at = 11;
    EXPECT_THROW(search.Run(db), std::runtime_error);
    search.eval_crash_at = 0;
    auto outcome = search.Run(db);
    EXPECT_EQ(outcome.evaluations, 20) << policy;
    EXPECT_GE(outcome.requeued, 1) << policy;  // the crashed one at least
    ExpectSoundTree(db, 20);
  }
}

}  // namespace
}  // namespace kernelevolve
