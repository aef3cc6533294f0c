// Issue 22, suite throughput: one Python worker process serves problem after problem
// (bench, compare, a queue worker), its log re-pointed per run; a worker that died
// while idle is replaced, never handed out; a different thread count gets its own.
#include <gtest/gtest.h>
#include <signal.h>

#include "problem/problem_loader.h"
#include "problem/worker_pool.h"
#include "scale_test_util.h"

namespace kernelevolve {
namespace {

using namespace scale_test;

problem::LoadOptions Load(const fs::path& problem, const fs::path& fixtures) {
  problem::LoadOptions o;
  o.problem_path = fs::path(KE_SOURCE_DIR) / problem;
  o.overrides = {{"batch_size", "4"}, {"dim", "64"}};
  o.seeds = {0};
  o.fixtures_dir = fixtures;
  o.baseline.min_time_seconds = 0.01;
  o.baseline.max_time_seconds = 0.05;
  o.baseline.min_repetitions = 3;
  return o;
}

TEST(WorkerPoolTest, OneProcessServesProblemAfterProblemAndADeadOneIsReplaced) {
  const fs::path dir = FreshDir("ke_worker_pool");
  problem::WorkerPool pool(2);
  problem::WorkerOptions first_run;
  first_run.log_path = dir / "first.log";
  pid_t pid = -1;
  {
    problem::PooledWorker w = pool.Take(first_run);
    pid = w->pid();
    const core::Problem relu = problem::LoadProblem(*w, Load("problems/level1/relu.py", dir / "relu"));
    EXPECT_EQ(relu.name, "relu");
  }  // back to the pool
  EXPECT_EQ(pool.Idle(), 1u);
  problem::WorkerOptions second_run = first_run;
  second_run.log_path = dir / "second.log";
  {
    problem::PooledWorker w = pool.Take(second_run);
    EXPECT_EQ(w->pid(), pid) << "a second process was started (a second torch import)";
    EXPECT_EQ(w->options().log_path, second_run.log_path);
    const core::Problem softmax = problem::LoadProblem(*w, Load("problems/level1/softmax.py", dir / "softmax"));
    EXPECT_EQ(softmax.name, "softmax");
    EXPECT_EQ(softmax.outputs.at(0).shape, (std::vector<int64_t>{4, 64}));
  }
  EXPECT_EQ(pool.Started(), 1);
  // Died while idle (OOM killer, a crash in a problem's atexit): replaced, not handed out.
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  {
    problem::PooledWorker w = pool.Take(second_run);
    EXPECT_NE(w->pid(), pid);
    EXPECT_EQ(pool.Started(), 2);
    EXPECT_EQ(problem::LoadProblem(*w, Load("problems/level1/relu.py", dir / "relu2")).name, "relu");
    pid = w->pid();
  }
  // Another thread count is another environment (OMP_NUM_THREADS): a process of its own.
  problem::WorkerOptions two_threads = second_run;
  two_threads.threads = 2;
  {
    problem::PooledWorker w = pool.Take(two_threads);
    EXPECT_NE(w->pid(), pid);
    EXPECT_EQ(pool.Started(), 3);
  }
  EXPECT_EQ(pool.Idle(), 2u);
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
