// Issue 22: a run directory is held by one process. A second optimize, resume or bench
// on it is refused with exit 2 naming the holder; a holder killed with SIGKILL leaves no
// stale lock, so resume then continues the run to its budget.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <iostream>

#include "scale_test_util.h"
#include "store/run_lock.h"

namespace kernelevolve {
namespace {

using namespace scale_test;

TEST(RunLockTest, ReentrantInProcessAndRefusedInAnotherUntilTheHolderIsKilled) {
  const fs::path dir = FreshDir("ke_lock_unit");
  {
    store::RunDirectoryLock outer = store::RunDirectoryLock::Acquire(dir / "run");
    store::RunDirectoryLock inner = store::RunDirectoryLock::Acquire(dir / "run");  // resume -> optimize
    EXPECT_TRUE(outer.Held());
    EXPECT_TRUE(inner.Held());
    const store::LockHolder me = store::ReadLockHolder(dir / "run" / store::kRunLockFileName);
    EXPECT_EQ(me.pid, static_cast<long>(::getpid()));
    EXPECT_FALSE(me.host.empty());
    EXPECT_FALSE(me.started_utc.empty());
    // Another process is refused while this one holds it (the child exits 2 on refusal).
    pid_t child = fork();
    if (child == 0) {
      try {
        store::RunDirectoryLock l = store::RunDirectoryLock::Acquire(dir / "run");
        _exit(0);
      } catch (const store::RunDirectoryBusyError& e) {
        _exit(std::string(e.what()).find(fmt::format("pid {}", ::getppid())) != std::string::npos ? 2 : 3);
      }
    }
    EXPECT_EQ(WaitExit(child), 2);
  }
  // Released with the last guard: a child takes it, then dies of SIGKILL holding it.
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t holder = fork();
  if (holder == 0) {
    store::RunDirectoryLock l = store::RunDirectoryLock::Acquire(dir / "run");
    char c = 'x';
    if (write(ready[1], &c, 1) != 1) _exit(1);
    pause();
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  EXPECT_THROW(store::RunDirectoryLock::Acquire(dir / "run"), store::RunDirectoryBusyError);
  kill(holder, SIGKILL);
  WaitExit(holder);
  store::RunDirectoryLock after = store::RunDirectoryLock::Acquire(dir / "run");
  EXPECT_TRUE(after.Held());
  close(ready[0]);
  close(ready[1]);
  if (!HasFailure()) fs::remove_all(dir);
}

TEST(RunLockTest, SecondOptimizeResumeAndBenchOnALiveRunAreRefusedThenResumeFinishes) {
  const fs::path dir = FreshDir("ke_lock_cli");
  const fs::path run = dir / "run";
  const fs::path db = run / "kernelevolve.db";
  const int budget = 10;
  const std::vector<std::string> optimize = {
      "optimize", "problems/level1/softmax.py", "--set", "batch_size=32", "--set", "dim=512", "--min-time", "0.02",
      "--budget", std::to_string(budget), "--confirm-rounds", "0", "--no-kb", "--quiet", "--policy", "ucb1",
      "--out", run.string(), "--cache-dir", (dir / "cache").string()};
  const pid_t first = Spawn(optimize, dir / "first.log");
  ASSERT_GT(first, 0);
  // Refused while the problem loads (no store yet: the old check let this one through).
  ASSERT_TRUE(WaitFor([&] { return store::ReadLockHolder(run / store::kRunLockFileName).pid == first; }, 60))
      << ReadFile(dir / "first.log");
  const pid_t second = Spawn(optimize, dir / "second.log");
  EXPECT_EQ(WaitExit(second), 2);
  const std::string second_log = ReadFile(dir / "second.log");
  EXPECT_NE(second_log.find(fmt::format("in use by pid {} on ", first)), std::string::npos) << second_log;
  EXPECT_NE(second_log.find("optimize problems/level1/softmax.py"), std::string::npos) << second_log;
  // A resume in the same first seconds (no store yet) names the holder too; it used to
  // say "no kernelevolve.db here".
  const bool store_yet = fs::exists(db);
  const pid_t early_resume = Spawn({"resume", run.string(), "--quiet"}, dir / "early_resume.log");
  EXPECT_EQ(WaitExit(early_resume), 2);
  const std::string early_log = ReadFile(dir / "early_resume.log");
  EXPECT_NE(early_log.find(fmt::format("the run directory is in use by pid {}", first)), std::string::npos)
      << early_log;
  EXPECT_EQ(early_log.find("no kernelevolve.db"), std::string::npos) << early_log;
  if (store_yet) std::cerr << "note: the store existed before the early resume; the no-store path was not exercised\n";
  // Once nodes are in the store: resume and bench on the same folder are refused too.
  ASSERT_TRUE(WaitFor([&] { return QueryInt(db, "SELECT COUNT(*) FROM nodes") >= 2; }, 180))
      << ReadFile(dir / "first.log");
  const pid_t resume = Spawn({"resume", run.string(), "--quiet"}, dir / "resume_refused.log");
  EXPECT_EQ(WaitExit(resume), 2);
  const std::string resume_log = ReadFile(dir / "resume_refused.log");
  EXPECT_NE(resume_log.find(fmt::format("resume {}: the run directory is in use by pid {}", run.string(), first)),
            std::string::npos)
      << resume_log;
  const pid_t bench = Spawn({"bench", "problems/level1", "--budget", "1", "--out", run.string()}, dir / "bench.log");
  EXPECT_EQ(WaitExit(bench), 2);
  EXPECT_NE(ReadFile(dir / "bench.log").find(fmt::format("in use by pid {}", first)), std::string::npos)
      << ReadFile(dir / "bench.log");
  // The refused processes did not touch the run; the holder dies without releasing.
  const int64_t at_kill = QueryInt(db, "SELECT COUNT(*) FROM nodes");
  ASSERT_EQ(kill(first, SIGKILL), 0);
  WaitExit(first);
  ASSERT_LT(at_kill, budget) << "the run finished before it could be killed";
  const pid_t resumed = Spawn({"resume", run.string(), "--quiet"}, dir / "resume.log");
  ASSERT_EQ(WaitExit(resumed), 0) << ReadFile(dir / "resume.log");
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM nodes"), budget);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(DISTINCT source_hash) FROM nodes"), budget);
  EXPECT_EQ(QueryText(db, "SELECT status FROM runs"), "ok");
  EXPECT_EQ(QueryText(db, "SELECT stop_reason FROM runs"), "budget");
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
