// Issue 22, faults around the queue that ended runs badly: NaN or 0 in --queue-timeout
// and --lease (NaN was stored as null and made the run unresumable; 0 printed CLI11's
// 300-digit range), SIGTERM on a queued run with no worker (it waited for
// --queue-timeout), and a worker whose Redis restarts (it exited 3).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "exec/queue_protocol.h"
#include "redis_test_server.h"
#include "scale_test_util.h"

namespace kernelevolve {
namespace {

using namespace scale_test;

TEST(QueueFaultsTest, NanInfAndZeroSecondsAreRefusedAtParseTime) {
  const fs::path dir = FreshDir("ke_queue_flags");
  const std::string unreachable = "redis://127.0.0.1:1/0";  // never contacted: parsing fails first
  const std::vector<std::vector<std::string>> cases = {
      {"optimize", "problems/level1/relu.py", "--queue", unreachable, "--queue-timeout", "nan", "--out",
       (dir / "run").string()},
      {"optimize", "problems/level1/relu.py", "--queue", unreachable, "--queue-timeout", "inf", "--out",
       (dir / "run").string()},
      {"worker", "--queue", unreachable, "--lease", "nan"},
      {"worker", "--queue", unreachable, "--lease", "0"},
      {"worker", "--queue", unreachable, "--lease", "-3"},
  };
  for (const auto& args : cases) {
    const std::string flag = args[args.size() - (args[0] == "optimize" ? 4 : 2)];
    const std::string value = args[args.size() - (args[0] == "optimize" ? 3 : 1)];
    const pid_t pid = Spawn(args, dir / "out.log");
    EXPECT_EQ(WaitExit(pid), 2) << flag << " " << value;
    const std::string out = ReadFile(dir / "out.log");
    EXPECT_NE(out.find(fmt::format("{}: {} is not a positive number of seconds", flag, value)), std::string::npos)
        << out;
    EXPECT_EQ(out.find("e-324"), std::string::npos) << out;  // CLI::PositiveNumber's range text
    EXPECT_EQ(out.find("cannot reach Redis"), std::string::npos) << out;
  }
  EXPECT_FALSE(fs::exists(dir / "run" / "kernelevolve.db"));
  if (!HasFailure()) fs::remove_all(dir);
}

TEST(QueueFaultsTest, SigtermOnAQueuedRunWithNoWorkerStopsPromptlyAndTheRunResumes) {
  if (!KE_HAVE_HIREDIS) GTEST_SKIP() << "built without hiredis (libhiredis-dev): no Redis client";
  const fs::path dir = FreshDir("ke_queue_sigterm");
  RedisServer redis(dir / "redis");
  ASSERT_TRUE(redis.Ready(20)) << redis.Log();
  Reaper reaper;
  const fs::path run = dir / "run";
  const fs::path db = run / "kernelevolve.db";
  const int budget = 2;
  const pid_t optimize =
      Spawn({"optimize", "problems/level1/relu.py", "--set", "batch_size=8", "--set", "dim=256", "--min-time", "0.02",
             "--budget", std::to_string(budget), "--confirm-rounds", "0", "--no-kb", "--quiet", "--queue", redis.Url(),
             "--queue-timeout", "3600", "--out", run.string(), "--cache-dir", (dir / "cache").string()},
            dir / "optimize.log");
  reaper.pids = {optimize};
  exec::RedisConnection conn = Connect(redis);
  auto queued = [&] {
    exec::RedisReply r = conn.Command({"XLEN", exec::JobStreamKey("cpu")});
    return r.kind == exec::RedisReply::Kind::kInteger ? r.integer : 0;
  };
  ASSERT_TRUE(WaitFor([&] { return queued() >= 1; }, 120)) << ReadFile(dir / "optimize.log");
  const auto sent = std::chrono::steady_clock::now();
  ASSERT_EQ(kill(optimize, SIGTERM), 0);
  const int code = WaitExit(optimize);
  reaper.pids.clear();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  EXPECT_EQ(code, 128 + SIGTERM) << ReadFile(dir / "optimize.log");
  EXPECT_LT(seconds, 30) << "it waited for the job's result";  // was --queue-timeout (an hour)
  EXPECT_EQ(QueryText(db, "SELECT status FROM runs"), "interrupted");
  EXPECT_EQ(queued(), 0) << "the interrupted run's job is still in the stream for workers to run";
  // Resumable: a worker comes, `resume` finishes the run to its budget.
  const pid_t worker = Spawn({"worker", "--queue", redis.Url(), "--name", "w", "--cache-dir",
                              (dir / "wcache").string()},
                             dir / "worker.log");
  reaper.pids = {worker};
  const pid_t resumed = Spawn({"resume", run.string(), "--quiet"}, dir / "resume.log");
  ASSERT_EQ(WaitExit(resumed), 0) << ReadFile(dir / "resume.log") << ReadFile(dir / "worker.log");
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM nodes"), budget);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM evaluations WHERE status = 'worker_lost'"), 0);
  EXPECT_EQ(QueryText(db, "SELECT stop_reason FROM runs"), "budget");
  if (!HasFailure()) fs::remove_all(dir);
}

TEST(QueueFaultsTest, WorkerReconnectsWhenRedisRestartsAndServesTheNextRun) {
  if (!KE_HAVE_HIREDIS) GTEST_SKIP() << "built without hiredis (libhiredis-dev): no Redis client";
  const fs::path dir = FreshDir("ke_queue_restart");
  auto redis = std::make_unique<RedisServer>(dir / "redis");
  ASSERT_TRUE(redis->Ready(20)) << redis->Log();
  const int port = redis->port();
  const std::string url = redis->Url();
  Reaper reaper;
  const pid_t worker =
      Spawn({"worker", "--queue", url, "--name", "w", "--cache-dir", (dir / "wcache").string()}, dir / "worker.log");
  reaper.pids = {worker};
  ASSERT_TRUE(WaitFor([&] { return ReadFile(dir / "worker.log").find("serving cpu jobs") != std::string::npos; }, 30))
      << ReadFile(dir / "worker.log");
  redis->Kill();  // a crash: the stream and the group are gone with it (no persistence)
  ASSERT_TRUE(WaitFor([&] { return ReadFile(dir / "worker.log").find("lost Redis") != std::string::npos; }, 15))
      << ReadFile(dir / "worker.log");
  std::this_thread::sleep_for(std::chrono::seconds(2));  // a few failed reconnection attempts
  EXPECT_EQ(waitpid(worker, nullptr, WNOHANG), 0) << "the worker exited while Redis was down";
  redis = std::make_unique<RedisServer>(dir / "redis2", port);
  ASSERT_TRUE(redis->Ready(20)) << redis->Log();
  ASSERT_TRUE(WaitFor([&] { return ReadFile(dir / "worker.log").find("reconnected to") != std::string::npos; }, 60))
      << ReadFile(dir / "worker.log");
  const fs::path run = dir / "run";
  const pid_t optimize =
      Spawn({"optimize", "problems/level1/relu.py", "--set", "batch_size=8", "--set", "dim=256", "--min-time", "0.02",
             "--budget", "1", "--confirm-rounds", "0", "--no-kb", "--quiet", "--queue", url, "--queue-timeout", "300",
             "--out", run.string(), "--cache-dir", (dir / "cache").string()},
            dir / "optimize.log");
  reaper.pids.push_back(optimize);
  EXPECT_EQ(WaitExit(optimize), 0) << ReadFile(dir / "optimize.log") << ReadFile(dir / "worker.log");
  reaper.pids = {worker};
  EXPECT_EQ(QueryInt(run / "kernelevolve.db", "SELECT COUNT(*) FROM node_workers"), 1) << ReadFile(dir / "worker.log");
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
