#include "cli/queue_setup.h"

#include <fmt/format.h>

#include "core/error.h"
#include "exec/queue_blobs.h"
#include "exec/redis_connection.h"

namespace kernelevolve::cli {

void ValidateQueueFlags(const OptimizeOptions& o) {
  if (o.queue.empty()) return;
  const exec::RedisUrl url = exec::ParseRedisUrl(o.queue);
  if (o.target != "cpu") {
    throw core::InvalidInputError(fmt::format(
        "--queue with --target {}: queue workers serve --target cpu only so far (docs/scale.md)", o.target));
  }
  if (o.queue_timeout_seconds <= 0) throw core::InvalidInputError("--queue-timeout must be positive");
  exec::RedisConnection::Connect(url);  // unreachable: exit 2 before the problem loads
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
  return std::make_unique<exec::QueueEvaluator>(std::move(q));
}

}  // namespace kernelevolve::cli
