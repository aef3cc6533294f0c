#include "cli/queue_setup.h"

#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "cli/interrupt.h"
#include "cli/run_setup.h"
#include "core/error.h"
#include "exec/queue_blobs.h"
#include "exec/queue_protocol.h"
#include "exec/queue_worker.h"
#include "exec/redis_connection.h"

namespace kernelevolve::cli {

void ValidateQueueFlags(const OptimizeOptions& o) {
  if (o.queue.empty()) return;
  const exec::RedisUrl url = exec::ParseRedisUrl(o.queue);
  RefuseDeviceFixtures("--queue");
  // A config file or resume can bring a value the flag's validator never saw.
  if (!std::isfinite(o.queue_timeout_seconds) || o.queue_timeout_seconds <= 0) {
    throw core::InvalidInputError("--queue-timeout must be a positive number of seconds");
  }
  exec::RedisConnection::Connect(url);  // unreachable: exit 2 before the problem loads
}

void RefuseDeviceFixtures(const std::string& who) {
  const std::string mode = FixturesModeFromEnv();
  if (mode == "files") return;
  const char* raw = std::getenv("KE_FIXTURES");
  if (mode == "device") {
    throw core::InvalidInputError(fmt::format("{} with KE_FIXTURES={} (or --fixtures device): jobs carry fixture "
                                              "files, and device fixtures do not go through the queue yet "
                                              "(docs/scale.md); unset KE_FIXTURES and use --fixtures files",
                                              who, raw));
  }
  throw core::InvalidInputError(
      fmt::format("{}: KE_FIXTURES='{}': expected 'files' or 'device' (unset it for the queue)", who, raw));
}

int LiveQueueWorkers(const std::string& queue, const std::string& target) {
  exec::RedisConnection redis = exec::RedisConnection::Connect(exec::ParseRedisUrl(queue));
  // Not the group's consumers: Redis 7.0 does not refresh a consumer's idle time on a
  // blocking read that returns nothing, and a dead worker's consumer stays in the group.
  const std::string list = redis.CommandOk({"CLIENT", "LIST"}).text;  // one line per connection
  const std::string wanted = " name=" + exec::WorkerConnectionName(target, "");
  int live = 0;
  for (size_t at = list.find(wanted); at != std::string::npos; at = list.find(wanted, at + 1)) ++live;
  return live;
}

std::unique_ptr<exec::QueueEvaluator> MakeQueueEvaluator(const OptimizeOptions& o, const core::Problem& problem,
                                                         const platforms::RunOptions& run_options) {
  if (o.queue.empty()) return nullptr;
  exec::QueueEvaluatorOptions q;
  q.url = exec::ParseRedisUrl(o.queue);
  q.target = o.target;
  exec::RedisConnection redis = exec::RedisConnection::Connect(q.url);
  q.problem = exec::PublishProblem(redis, problem, o.problem_path);
  q.problem.overrides = problem.overrides;
  q.problem.seeds = problem.seeds;
  q.problem.threads = o.threads;
  q.problem.omp_wait_policy = o.omp_wait_policy;
  q.problem.load_timeout_seconds = o.load_timeout_seconds;
  q.problem.hash = exec::ProblemHash(q.problem);
  q.run_options = run_options;
  q.eager_min_time_seconds = o.min_time_seconds;
  q.eager_max_time_seconds = o.max_time_seconds;
  q.eager_flush_cache = o.cache_flush;
  q.result_timeout_seconds = o.queue_timeout_seconds;
  q.interrupt = InterruptFlag();  // SIGTERM with no worker: stop now, not after --queue-timeout
  return std::make_unique<exec::QueueEvaluator>(std::move(q));
}

}  // namespace kernelevolve::cli
