// Evaluates candidates on `kernelevolve worker` processes through a Redis stream
// (issue 22; docs/scale.md): the Evaluator the search uses with --queue.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "exec/evaluator.h"
#include "exec/queue_protocol.h"
#include "exec/redis_url.h"

namespace kernelevolve::exec {

class RedisConnection;

struct QueueEvaluatorOptions {
  RedisUrl url;
  std::string target = "cpu";
  ProblemRef problem;                     // PublishProblem's answer
  platforms::RunOptions run_options;
  double eager_min_time_seconds = 0.2;    // the worker's paired eager timing
  double eager_max_time_seconds = 2.0;
  bool eager_flush_cache = false;
  double result_timeout_seconds = 3600;   // one job's wait for its result at most
  /// Set by SIGINT/SIGTERM (cli::InterruptFlag); checked every second of a wait. null: none.
  const std::atomic<bool>* interrupt = nullptr;
};

/// Each Evaluate puts one job on JobStreamKey(target) and waits for the result with its
/// job id on this evaluator's result stream. A result that arrives twice (a job
/// reclaimed from a worker that was slow, not dead) is taken once: the first one ends
/// the wait, later ones are never read for that job. Thread-safe: each call talks to
/// Redis over a connection of its own, so EvaluationPool's --jobs threads keep that many
/// jobs in flight. The search's store stays the record: a job whose orchestrator died
/// is simply re-queued by `resume` as a pending candidate.
class QueueEvaluator : public Evaluator {
 public:
  /// Creates the consumer group (workers may start later). Throws
  /// core::InvalidInputError when Redis cannot be reached.
  explicit QueueEvaluator(QueueEvaluatorOptions options);
  /// Blocks until a worker posts the result. No result within result_timeout_seconds:
  /// an Evaluation with Status::kWorkerLost saying so. Throws core::IoError when Redis
  /// itself fails, EvaluationInterrupted within a second of options.interrupt being set
  /// (the job is deleted from the stream first, so no worker starts it afterwards).
  core::Evaluation Evaluate(const core::Candidate& candidate) override;
  /// The result stream of this evaluator (ResultStreamKey of its run key).
  const std::string& result_stream() const { return result_stream_; }

 private:
  QueueEvaluatorOptions options_;
  std::string run_key_;
  std::string result_stream_;
  std::atomic<int64_t> next_job_{0};
};

/// Creates the consumer group of `stream` reading from its start, with the stream
/// (MKSTREAM); an existing group is kept.
void EnsureWorkerGroup(RedisConnection& redis, const std::string& stream);

}  // namespace kernelevolve::exec
