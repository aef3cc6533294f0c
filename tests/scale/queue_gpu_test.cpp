// Issue 22: GPU targets through the Redis queue. `optimize --target triton --queue` posts
// its jobs to the triton stream; `kernelevolve worker --target triton` serves them with
// its own GPU runner, which reads the job's fixtures through a manifest naming the
// worker's copy of the problem file. Without a GPU the runner is Triton's interpreter
// (TRITON_INTERPRET=1: correctness only), which is enough for the plumbing; the H200
// figures are in docs/scale.md.
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "exec/queue_protocol.h"
#include "redis_test_server.h"
#include "scale_test_util.h"

namespace kernelevolve {
namespace {

using namespace scale_test;

/// The interpreter with any GPU hidden, for this test process and its children.
class QueueGpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ::setenv("TRITON_INTERPRET", "1", 1);
    ::setenv("CUDA_VISIBLE_DEVICES", "", 1);
  }
  void TearDown() override {
    ::unsetenv("TRITON_INTERPRET");
    ::unsetenv("CUDA_VISIBLE_DEVICES");
    ::unsetenv("KE_FIXTURES");
  }
};

TEST_F(QueueGpuTest, TritonJobsAreServedByATritonWorkerWithItsOwnRunner) {
  if (!KE_HAVE_HIREDIS) GTEST_SKIP() << "built without hiredis (libhiredis-dev): no Redis client";
  const fs::path dir = FreshDir("ke_queue_gpu");
  RedisServer redis(dir / "redis");
  ASSERT_TRUE(redis.Ready(20)) << "redis-server (scripts/setup.sh installs it) did not start:\n" << redis.Log();
  Reaper reaper;
  const fs::path worker_cache = dir / "cache_g1";
  const pid_t worker = Spawn({"worker", "--queue", redis.Url(), "--target", "triton", "--name", "g1", "--cache-dir",
                              worker_cache.string()},
                             dir / "g1.log");
  reaper.pids = {worker};
  const int budget = 3;
  const fs::path run = dir / "run";
  const fs::path db = run / "kernelevolve.db";
  const pid_t optimize = Spawn({"optimize", "problems/level1/relu.py", "--target", "triton", "--set", "batch_size=4",
                                "--set", "dim=64", "--seeds", "2", "--min-time", "0.01", "--budget",
                                std::to_string(budget), "--confirm-rounds", "0", "--no-kb", "--queue", redis.Url(),
                                "--queue-timeout", "300", "--out", run.string(), "--cache-dir",
                                (dir / "cache_orchestrator").string()},
                               dir / "optimize.log");
  reaper.pids.push_back(optimize);
  const int code = WaitExit(optimize);
  reaper.pids = {worker};
  const std::string log = ReadFile(dir / "optimize.log") + ReadFile(dir / "g1.log");
  ASSERT_EQ(code, 0) << log;
  EXPECT_NE(log.find("kernelevolve worker --queue " + redis.Url() + " --target triton"), std::string::npos) << log;
  // Every evaluation was the triton worker's, none refused or lost.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM evaluations"), budget) << log;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM evaluations WHERE status = 'worker_lost'"), 0) << log;
  EXPECT_GE(QueryInt(db, "SELECT COUNT(*) FROM evaluations WHERE status = 'ok'"), 1) << log;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM node_workers WHERE json_extract(worker_json, '$.worker') = 'g1'"),
            budget)
      << log;
  EXPECT_EQ(QueryText(db, "SELECT stop_reason FROM runs"), "budget");
  EXPECT_NE(ReadFile(dir / "g1.log").find("serving triton jobs"), std::string::npos) << log;
  // The runner's manifest names the worker's copy of the problem (its own cache), not
  // the orchestrator's path; the fixture files are the orchestrator's.
  const fs::path runners = worker_cache / "queue" / "runner" / std::to_string(worker);
  ASSERT_TRUE(fs::is_directory(runners)) << log;
  int manifests = 0;
  for (const auto& folder : fs::directory_iterator(runners)) {
    std::ifstream in(folder.path() / "manifest.json");
    const auto manifest = nlohmann::json::parse(in);
    const std::string source = manifest.value("source_path", "");
    EXPECT_EQ(source.rfind(fs::absolute(worker_cache).string(), 0), 0u) << source;
    EXPECT_EQ(fs::path(source).filename(), "relu.py");
    EXPECT_TRUE(fs::is_regular_file(folder.path() / "seed_0.safetensors"));
    ++manifests;
  }
  EXPECT_EQ(manifests, 1);
  // A worker that leaves removes its runner folders (hard links to the fetched fixtures).
  kill(worker, SIGTERM);
  EXPECT_EQ(WaitExit(worker), 0);
  reaper.pids.clear();
  EXPECT_FALSE(fs::exists(runners));
  EXPECT_FALSE(fs::is_empty(worker_cache / "queue" / "fixtures"));
  // Nothing went to (or was left on) the CPU stream.
  exec::RedisConnection conn = Connect(redis);
  EXPECT_EQ(conn.Command({"XLEN", exec::JobStreamKey("cpu")}).integer, 0);
  if (!HasFailure()) fs::remove_all(dir);
}

TEST_F(QueueGpuTest, NoGpuAndDeviceOrUnknownFixturesAreRefusedWithOneLine) {
  if (!KE_HAVE_HIREDIS) GTEST_SKIP() << "built without hiredis (libhiredis-dev): no Redis client";
  const fs::path dir = FreshDir("ke_queue_gpu_refusals");
  RedisServer redis(dir / "redis");
  ASSERT_TRUE(redis.Ready(20)) << redis.Log();
  // A GPU worker without a GPU (and not under the interpreter) stops before it joins.
  ::unsetenv("TRITON_INTERPRET");
  ExpectOneLineRefusal({"worker", "--queue", redis.Url(), "--target", "triton", "--cache-dir", (dir / "c").string()},
                       dir / "worker.log", "no CUDA GPU is visible");
  // Device fixtures do not travel through the queue (jobs carry fixture files).
  ::setenv("TRITON_INTERPRET", "1", 1);
  ::setenv("KE_FIXTURES", "device", 1);
  ExpectOneLineRefusal({"optimize", "problems/level1/relu.py", "--target", "triton", "--queue", redis.Url(), "--out",
                        (dir / "run").string(), "--cache-dir", (dir / "c").string()},
                       dir / "optimize.log", "KE_FIXTURES=device");
  EXPECT_FALSE(fs::exists(dir / "run" / "kernelevolve.db"));
  // The problem worker reads the variable trimmed and lower-cased; so does the refusal.
  ::setenv("KE_FIXTURES", " Device", 1);
  ExpectOneLineRefusal({"worker", "--queue", redis.Url(), "--target", "triton", "--cache-dir", (dir / "c").string()},
                       dir / "worker2.log", "KE_FIXTURES= Device");
  // A value the problem worker would refuse stops the worker before it takes jobs
  // (it used to answer every job worker_lost).
  ::setenv("KE_FIXTURES", "devices", 1);
  ExpectOneLineRefusal({"worker", "--queue", redis.Url(), "--cache-dir", (dir / "c").string()}, dir / "worker3.log",
                       "expected 'files' or 'device'");
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
