// Issue 22: evaluations through a Redis stream. A real redis-server on a free local
// port, two `kernelevolve worker`s and an `optimize --queue`; one worker is killed with
// SIGKILL in the middle of a job, then the orchestrator too, `resume` continues, and the
// run ends with exactly its budget of evaluations, none lost or doubled. Plus: a result posted twice counts once, a worker
// refuses a job whose problem or fixture hashes do not match, bad URLs exit 2.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <thread>

#include "core/error.h"
#include "exec/queue_evaluator.h"
#include "exec/queue_protocol.h"
#include "exec/redis_connection.h"
#include "redis_test_server.h"
#include "scale_test_util.h"

namespace kernelevolve {
namespace {

using namespace scale_test;

TEST(QueueTest, KilledWorkersJobIsReclaimedAndAResumedRunEndsWithExactlyItsBudget) {
  if (!KE_HAVE_HIREDIS) GTEST_SKIP() << "built without hiredis (libhiredis-dev): no Redis client";
  const fs::path dir = FreshDir("ke_queue_kill");
  RedisServer redis(dir / "redis");
  ASSERT_TRUE(redis.Ready(20)) << "redis-server (scripts/setup.sh installs it) did not start:\n" << redis.Log();
  Reaper reaper;
  // Two workers with build caches of their own (each compiles what it gets), a short
  // lease so that the killed worker's job is taken over within seconds.
  auto start_worker = [&](const std::string& name) {
    return Spawn({"worker", "--queue", redis.Url(), "--name", name, "--lease", "3", "--cache-dir",
                  (dir / ("cache_" + name)).string()},
                 dir / (name + ".log"));
  };
  const pid_t w1 = start_worker("w1");
  const pid_t w2 = start_worker("w2");
  reaper.pids = {w1, w2};
  const int budget = 10;
  const fs::path run = dir / "run";
  const fs::path db = run / "kernelevolve.db";
  const pid_t optimize =
      Spawn({"optimize", "problems/level1/softmax.py", "--set", "batch_size=32", "--set", "dim=512", "--min-time",
             "0.02", "--budget", std::to_string(budget), "--jobs", "2", "--confirm-rounds", "0", "--no-kb", "--quiet",
             "--policy", "ucb1", "--queue", redis.Url(), "--queue-timeout", "150", "--out", run.string(),
             "--cache-dir", (dir / "cache_orchestrator").string()},
            dir / "optimize.log");
  reaper.pids.push_back(optimize);
  exec::RedisConnection conn = Connect(redis);
  // Mid-run: some nodes stored, and w1 holding a job it has not answered. w1 is frozen
  // (SIGSTOP) while we look, so that the job it holds cannot finish in between.
  std::string held_job;
  const bool mid_job = WaitFor(
      [&] {
        if (QueryInt(db, "SELECT COUNT(*) FROM nodes") < 2 || PendingFor(conn, "w1") == 0) return false;
        kill(w1, SIGSTOP);
        exec::RedisReply held =
            conn.Command({"XPENDING", exec::JobStreamKey("cpu"), exec::kWorkerGroup, "-", "+", "1", "w1"});
        if (held.elements.size() == 1) {
          const std::string id = held.elements[0].elements[0].text;
          exec::RedisReply entry = conn.CommandOk({"XRANGE", exec::JobStreamKey("cpu"), id, id});
          if (entry.elements.size() == 1) held_job = entry.elements[0].elements[1].elements[1].text;  // [job_id, ID, ...]
        }
        if (held_job.empty()) kill(w1, SIGCONT);
        return !held_job.empty();
      },
      150);
  ASSERT_TRUE(mid_job) << ReadFile(dir / "optimize.log") << ReadFile(dir / "w1.log") << ReadFile(dir / "w2.log");
  const int64_t at_kill = QueryInt(db, "SELECT COUNT(*) FROM nodes");
  ASSERT_EQ(kill(w1, SIGKILL), 0);
  WaitExit(w1);
  ASSERT_LT(at_kill, budget) << "the run finished before a worker could be killed";

  // w2 takes over the job w1 died with (after the 3-second lease) and answers it...
  ASSERT_TRUE(WaitFor([&] { return ReadFile(dir / "w2.log").find(fmt::format("worker w2: job {} ", held_job)) !=
                                   std::string::npos; },
                      120))
      << held_job << "\n" << ReadFile(dir / "w2.log") << ReadFile(dir / "optimize.log");
  // ...then the orchestrator dies too: `resume` goes on through the queue (the store is
  // the record; its pending candidates become new jobs).
  const int64_t at_orchestrator_kill = QueryInt(db, "SELECT COUNT(*) FROM nodes");
  ASSERT_EQ(kill(optimize, SIGKILL), 0);
  WaitExit(optimize);
  ASSERT_LT(at_orchestrator_kill, budget) << "the run finished before the orchestrator could be killed";
  const pid_t resumed = Spawn({"resume", run.string(), "--quiet"}, dir / "resume.log");
  reaper.pids = {w2, resumed};
  const int code = WaitExit(resumed);
  reaper.pids = {w2};
  const std::string log = ReadFile(dir / "optimize.log") + ReadFile(dir / "resume.log") + ReadFile(dir / "w1.log") +
                          ReadFile(dir / "w2.log");
  ASSERT_EQ(code, 0) << log;
  // Exactly the budget: nothing lost (the killed job answered by w2), nothing doubled.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM nodes"), budget) << log;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(DISTINCT source_hash) FROM nodes"), budget);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM evaluations"), budget);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM evaluations WHERE status = 'worker_lost'"), 0) << log;
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM pending"), 0);
  EXPECT_EQ(QueryText(db, "SELECT status FROM runs"), "ok");
  EXPECT_EQ(QueryText(db, "SELECT stop_reason FROM runs"), "budget");
  // Every node records the worker that measured it; w2 took over the killed job.
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM node_workers"), budget);
  EXPECT_EQ(QueryInt(db, "SELECT COUNT(*) FROM node_workers WHERE json_extract(worker_json, '$.worker') = 'w2'") +
                QueryInt(db, "SELECT COUNT(*) FROM node_workers WHERE json_extract(worker_json, '$.worker') = 'w1'"),
            budget);
  EXPECT_GE(QueryInt(db, "SELECT COUNT(*) FROM node_workers WHERE json_extract(worker_json, '$.worker') = 'w2'"),
            budget - at_kill);
  EXPECT_FALSE(QueryText(db, "SELECT json_extract(worker_json, '$.machine.cpu_model') FROM node_workers").empty());
  // The job w1 died with was not answered by w1 (w2 ran it again, above).
  EXPECT_EQ(ReadFile(dir / "w1.log").find(fmt::format("worker w1: job {} ", held_job)), std::string::npos);
  // No job left behind in the group.
  EXPECT_EQ(PendingFor(conn, "w1"), 0u);
  EXPECT_EQ(PendingFor(conn, "w2"), 0u);
  EXPECT_TRUE(fs::exists(run / "result.json"));
  if (!HasFailure()) fs::remove_all(dir);
}

/// A job whose problem is not published anywhere: enough for the refusal paths.
exec::QueueJob BareJob(const std::string& id, const std::string& reply) {
  exec::QueueJob job;
  job.job_id = id;
  job.reply_stream = reply;
  job.expires_unix_s = 0;
  job.target = "cpu";
  job.problem.file_name = "relu.py";
  job.problem.source_hash = "0123456789abcdef";
  job.problem.seeds = {0};
  job.problem.fixtures = {{"manifest.json", "fedcba9876543210", 10}};
  job.problem.fixtures_hash = exec::FixturesHash(job.problem.fixtures);
  job.problem.hash = exec::ProblemHash(job.problem);
  job.candidate.source = "int x;";
  return job;
}

/// The result of `job_id` on `stream` (waits up to 60 s); null when none came.
nlohmann::json ResultOf(exec::RedisConnection& redis, const std::string& stream, const std::string& job_id) {
  nlohmann::json found;
  WaitFor(
      [&] {
        exec::RedisReply r = redis.Command({"XRANGE", stream, "-", "+"});
        for (const auto& entry : r.elements) {
          const auto& fv = entry.elements[1].elements;
          if (fv.size() >= 6 && fv[1].text == job_id) found = nlohmann::json::parse(fv[5].text);
        }
        return !found.is_null();
      },
      60);
  return found;
}

TEST(QueueTest, WorkerRefusesJobsWhoseProblemOrFixtureHashesDoNotMatch) {
  if (!KE_HAVE_HIREDIS) GTEST_SKIP() << "built without hiredis (libhiredis-dev): no Redis client";
  const fs::path dir = FreshDir("ke_queue_refuse");
  RedisServer redis(dir / "redis");
  ASSERT_TRUE(redis.Ready(20)) << redis.Log();
  Reaper reaper;
  reaper.pids = {Spawn({"worker", "--queue", redis.Url(), "--name", "w", "--cache-dir", (dir / "cache").string()},
                       dir / "w.log")};
  exec::RedisConnection conn = Connect(redis);
  // The problem hash does not cover the fields (a tampered or mixed-up job).
  exec::QueueJob tampered = BareJob("t:1", "ke:results:t");
  tampered.problem.overrides["batch_size"] = "4096";
  // Hashes agree, but the fixture blob is not there (never published, or expired).
  exec::QueueJob missing = BareJob("t:2", "ke:results:t");
  for (const auto* job : {&tampered, &missing}) {
    conn.CommandOk({"XADD", exec::JobStreamKey("cpu"), "*", "job_id", job->job_id, "job",
                    exec::JobToJson(*job).dump()});
  }
  const nlohmann::json r1 = ResultOf(conn, "ke:results:t", "t:1");
  const nlohmann::json r2 = ResultOf(conn, "ke:results:t", "t:2");
  ASSERT_FALSE(r1.is_null()) << ReadFile(dir / "w.log");
  ASSERT_FALSE(r2.is_null()) << ReadFile(dir / "w.log");
  EXPECT_EQ(r1["status"], "worker_lost");
  EXPECT_NE(r1["message"].get<std::string>().find("problem hash mismatch"), std::string::npos) << r1.dump();
  EXPECT_EQ(r2["status"], "worker_lost");
  EXPECT_NE(r2["message"].get<std::string>().find("is not in the queue's Redis"), std::string::npos) << r2.dump();
  EXPECT_FALSE(r1["correct"].get<bool>());
  // Neither job was built or its fixtures written: no file anywhere in the worker's cache.
  int files = 0;
  for (const auto& item : fs::recursive_directory_iterator(dir / "cache")) files += item.is_regular_file() ? 1 : 0;
  EXPECT_EQ(files, 0);
  if (!HasFailure()) fs::remove_all(dir);
}

TEST(QueueTest, AResultPostedTwiceCountsOnce) {
  if (!KE_HAVE_HIREDIS) GTEST_SKIP() << "built without hiredis (libhiredis-dev): no Redis client";
  const fs::path dir = FreshDir("ke_queue_twice");
  RedisServer redis(dir / "redis");
  ASSERT_TRUE(redis.Ready(20)) << redis.Log();
  exec::QueueEvaluatorOptions options;
  options.url = exec::ParseRedisUrl(redis.Url());
  options.result_timeout_seconds = 30;
  exec::QueueEvaluator evaluator(options);
  // A scripted worker: answers every job twice (a reclaimed job that both its first
  // and its second worker finished), the duplicate with another speedup.
  std::thread fake_worker([&] {
    exec::RedisConnection redis_conn = Connect(redis);
    for (int answered = 0; answered < 2;) {
      exec::RedisReply r = redis_conn.CommandOk({"XREADGROUP", "GROUP", exec::kWorkerGroup, "fake", "COUNT", "1",
                                                 "BLOCK", "1000", "STREAMS", exec::JobStreamKey("cpu"), ">"});
      if (r.IsNil() || r.elements.empty()) continue;
      for (const auto& entry : r.elements[0].elements[1].elements) {
        const auto& fv = entry.elements[1].elements;
        const exec::QueueJob job = exec::JobFromJson(nlohmann::json::parse(fv[3].text));
        for (double speedup : {1.5, 9.0}) {
          core::Evaluation e;
          e.status = core::Status::kOk;
          e.message = job.candidate.source;
          e.correct = true;
          e.speedup_vs_eager.value = speedup;
          e.fitness = speedup;
          redis_conn.CommandOk({"XADD", job.reply_stream, "*", "job_id", job.job_id, "worker", "fake", "result",
                                exec::EvaluationToJson(e).dump()});
        }
        redis_conn.CommandOk({"XACK", exec::JobStreamKey("cpu"), exec::kWorkerGroup, entry.elements[0].text});
        ++answered;
      }
    }
  });
  core::Candidate a;
  a.source = "kernel a";
  core::Candidate b;
  b.source = "kernel b";
  const core::Evaluation ea = evaluator.Evaluate(a);
  const core::Evaluation eb = evaluator.Evaluate(b);
  fake_worker.join();
  // Each job took its own first answer: the duplicate of job a is not job b's result.
  EXPECT_EQ(ea.message, "kernel a");
  EXPECT_DOUBLE_EQ(ea.speedup_vs_eager.value, 1.5);
  EXPECT_EQ(eb.message, "kernel b");
  EXPECT_DOUBLE_EQ(eb.speedup_vs_eager.value, 1.5);
  exec::RedisConnection conn = Connect(redis);
  EXPECT_EQ(conn.CommandOk({"XLEN", evaluator.result_stream()}).integer, 4);  // both duplicates were there
  if (!HasFailure()) fs::remove_all(dir);
}

TEST(QueueTest, BadOrUnreachableQueueExitsTwoWithOneLine) {
  if (!KE_HAVE_HIREDIS) GTEST_SKIP() << "built without hiredis (libhiredis-dev): no Redis client";
  const fs::path dir = FreshDir("ke_queue_bad");
  const int closed = FreePort();
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"worker", "--queue", "http://127.0.0.1:6379"}, "not a redis:// URL"},
      {{"worker", "--queue", "redis://127.0.0.1:99999"}, "bad port"},
      {{"worker", "--queue", fmt::format("redis://127.0.0.1:{}", closed)}, "cannot reach Redis"},
      {{"optimize", "problems/level1/relu.py", "--queue", fmt::format("redis://127.0.0.1:{}/0", closed), "--out",
        (dir / "run").string()},
       "cannot reach Redis"},
      {{"optimize", "problems/level1/relu.py", "--queue", "redis://", "--out", (dir / "run2").string()}, "no host"},
  };
  for (const auto& c : cases) ExpectOneLineRefusal(c.args, dir / "out.log", c.expected);
  EXPECT_FALSE(fs::exists(dir / "run" / "kernelevolve.db"));
  if (!HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
