// Issue 22 item 4: `bench --queue` runs one problem per live worker at once, in one
// process, and keeps the suite's order in bench.json; LiveQueueWorkers counts the
// workers connected now (a killed one is gone at once).
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/queue_setup.h"
#include "redis_test_server.h"
#include "scale_test_util.h"

namespace kernelevolve {
namespace {

using namespace scale_test;

TEST(BenchQueueTest, RunsOneProblemPerLiveWorkerAtOnceAndKeepsTheSuiteOrder) {
  if (!KE_HAVE_HIREDIS) GTEST_SKIP() << "built without hiredis (libhiredis-dev): no Redis client";
  const fs::path dir = FreshDir("ke_bench_queue");
  RedisServer redis(dir / "redis");
  ASSERT_TRUE(redis.Ready(20)) << redis.Log();
  Reaper reaper;
  for (const std::string name : {"w0", "w1", "w2"}) {
    reaper.pids.push_back(Spawn({"worker", "--queue", redis.Url(), "--name", name, "--cache-dir",
                                 (dir / ("cache_" + name)).string()},
                                dir / (name + ".log")));
  }
  ASSERT_TRUE(WaitFor([&] { return cli::LiveQueueWorkers(redis.Url(), "cpu") == 3; }, 60))
      << cli::LiveQueueWorkers(redis.Url(), "cpu") << ReadFile(dir / "w0.log");
  ASSERT_EQ(kill(reaper.pids.back(), SIGKILL), 0);  // a worker lost: no longer counted
  WaitExit(reaper.pids.back());
  reaper.pids.pop_back();
  ASSERT_TRUE(WaitFor([&] { return cli::LiveQueueWorkers(redis.Url(), "cpu") == 2; }, 10));
  EXPECT_EQ(cli::LiveQueueWorkers(redis.Url(), "gpu"), 0);  // another target's workers: none

  const fs::path suite = dir / "suite";
  fs::create_directories(suite);
  for (const std::string p : {"relu", "softsign", "tanh"}) {
    fs::copy_file(fs::path(KE_SOURCE_DIR) / "problems/level1" / (p + ".py"), suite / (p + ".py"));
  }
  const pid_t bench = Spawn({"bench", suite.string(), "--budget", "2", "--set", "batch_size=8", "--set", "dim=256",
                             "--min-time", "0.02", "--confirm-rounds", "1", "--queue", redis.Url(), "--out",
                             (dir / "bench").string(), "--cache-dir", (dir / "cache").string()},
                            dir / "bench.log");
  reaper.pids.push_back(bench);
  ASSERT_EQ(WaitExit(bench), 0) << ReadFile(dir / "bench.log");
  reaper.pids.pop_back();
  const std::string log = ReadFile(dir / "bench.log");
  EXPECT_NE(log.find("3 problems from"), std::string::npos) << log;
  EXPECT_NE(log.find("2 at a time"), std::string::npos) << log;
  const nlohmann::json doc = nlohmann::json::parse(ReadFile(dir / "bench" / "bench.json"));
  ASSERT_EQ(doc["problems"].size(), 3u) << doc.dump(1);
  EXPECT_EQ(doc["problems"][0]["problem"], "relu");  // suite order, whatever finished first
  EXPECT_EQ(doc["problems"][1]["problem"], "softsign");
  EXPECT_EQ(doc["problems"][2]["problem"], "tanh");
  EXPECT_EQ(doc["totals"]["correct"], 3) << log;
  for (const auto& p : doc["problems"]) {
    EXPECT_EQ(p["evaluations"], 2) << p.dump();
    // Each problem's summary went to its own file (not to another problem's).
    const std::string summary = ReadFile(fs::path(p["run_dir"].get<std::string>()) / "summary.txt");
    EXPECT_NE(summary.find(fmt::format("run directory: {}", p["run_dir"].get<std::string>())), std::string::npos)
        << summary;
  }
  // The refusal without a queue.
  const pid_t refused = Spawn({"bench", suite.string(), "--problems-at-once", "2", "--out", (dir / "b2").string()},
                              dir / "refused.log");
  EXPECT_EQ(WaitExit(refused), 2);
  EXPECT_NE(ReadFile(dir / "refused.log").find("--problems-at-once 2 needs --queue"), std::string::npos);
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
