// `kernelevolve worker`: takes evaluation jobs from the Redis stream, builds, checks and
// times them on this machine, posts the results (issue 22; docs/scale.md).
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/problem.h"
#include "exec/local_evaluator.h"
#include "exec/queue_protocol.h"
#include "exec/redis_connection.h"
#include "exec/redis_url.h"
#include "platforms/platform.h"
#include "problem/worker_client.h"
#include "problem/worker_pool.h"

namespace kernelevolve::exec {

struct QueueWorkerOptions {
  RedisUrl url;
  std::string target = "cpu";
  std::string name;                  // consumer name in the group; "" -> "<host>:<pid>"
  std::filesystem::path cache_dir;   // <cache>/queue: fetched problems and fixtures, loaded problems' own fixtures
  double lease_seconds = 60;         // a job idle this long in another consumer's hands is taken over
  int max_jobs = 0;                  // exit after this many jobs; 0: no limit
  double idle_exit_seconds = 0;      // exit after this long without a job; 0: never
  std::filesystem::path log_dir;     // the Python workers' logs (one per problem)
  bool quiet = false;                // no line per job on stderr
  /// GPU targets (cli::GpuPairedEagerTimer): the eager PyTorch time the platform measured
  /// on the device, interleaved with the candidate it timed last. When set, speedups are
  /// taken against it alone (the problem worker's eager time is a CPU time), and the GPU
  /// runner reads the job's fixtures through a manifest that names this worker's copy of
  /// the problem file. Null on the CPU target: eager is timed by the problem worker.
  BaselineTimer platform_paired_eager;
};

/// One worker process: one job at a time, so a candidate and its paired eager timing
/// always run on this machine, one after the other (LocalEvaluator, as without a queue).
/// Problems stay loaded (a Python worker each, the two most recent) between jobs.
/// The Redis connection name (CLIENT SETNAME) of a worker named `name` serving `target`:
/// "ke-worker:<target>:<name>", spaces replaced by '_'. A worker names its connection so;
/// `bench --problems-at-once 0` counts the connections whose name starts with
/// WorkerConnectionName(target, "") in CLIENT LIST as the live workers (a dead worker's
/// connection is gone; a consumer of the group stays after its worker died).
std::string WorkerConnectionName(const std::string& target, const std::string& name);

/// Longest wait between two reconnection attempts to a lost Redis, seconds.
inline constexpr double kMaxReconnectWaitSeconds = 30;

class QueueWorker {
 public:
  /// `platform` (this machine's, for options.target) must outlive the worker. Connects
  /// and creates the consumer group; throws core::InvalidInputError when Redis cannot be
  /// reached.
  QueueWorker(QueueWorkerOptions options, platforms::Platform& platform);
  ~QueueWorker();
  /// Serves jobs until `stop` is set (checked between jobs and every second while
  /// waiting), max_jobs are done or idle_exit_seconds pass without one. Returns the
  /// number of jobs answered. When Redis fails (restart, network) it logs the loss on
  /// stderr and reconnects with exponential backoff (0.5 s doubling up to
  /// kMaxReconnectWaitSeconds), re-creating the consumer group, until it succeeds or
  /// `stop` is set; a job whose answer could not be posted is run again after its lease.
  int Run(const std::atomic<bool>* stop);
  /// {"worker": name, "machine": core::MachineToJson(...)}: what every result records.
  const std::string& Identity() const { return identity_; }

 private:
  struct Message {
    std::string id;       // the stream entry id
    std::string payload;  // the job's JSON ("" when the entry was deleted)
  };
  struct LoadedProblem {
    problem::PooledWorker python;  // back to WorkerPool::Shared() when the problem is dropped
    std::unique_ptr<core::Problem> problem;
    std::map<std::string, std::unique_ptr<LocalEvaluator>> evaluators;  // by run options
    int64_t last_used = 0;
  };
  std::optional<Message> ClaimStale();
  std::optional<Message> ReadNew();
  void Handle(const Message& message);
  core::Evaluation Evaluate(const QueueJob& job);
  LoadedProblem& Load(const QueueJob& job);
  /// GPU targets: <cache>/queue/runner/<pid>, the runner's fixture folders (removed on exit).
  std::filesystem::path RunnerDir() const;
  void Finish(const std::string& message_id);
  /// Reconnects after `why` (a failed command), backing off; false when `stop` was set first.
  bool Reconnect(const std::string& why, const std::atomic<bool>* stop);

  QueueWorkerOptions options_;
  platforms::Platform& platform_;
  RedisConnection redis_;
  std::string stream_;
  std::string identity_;
  std::map<std::string, LoadedProblem> loaded_;  // by problem hash
  int64_t uses_ = 0;
};

}  // namespace kernelevolve::exec
