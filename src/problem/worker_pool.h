// Python workers kept alive between problems (issue 22, suite throughput): `bench`,
// `compare` and a queue worker run many problems in one process, and each used to start
// a Python worker of its own (a torch import, seconds per problem; two on GPU targets,
// the problem worker and the GPU runner). The pool hands a finished problem's worker to
// the next problem; the Python session frees the previous problem when it loads the next.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>

#include "problem/worker_client.h"

namespace kernelevolve::problem {

class WorkerPool;

/// Gives a worker back to its pool instead of shutting it down (the deleter of
/// PooledWorker); a null pool shuts it down.
struct ReturnToPool {
  WorkerPool* pool = nullptr;
  void operator()(WorkerClient* worker) const;
};

/// A worker on loan from a pool: use it as a std::unique_ptr<WorkerClient>; when it
/// goes, the worker goes back to the pool (alive) or is reaped (dead).
using PooledWorker = std::unique_ptr<WorkerClient, ReturnToPool>;

class WorkerPool {
 public:
  /// Keeps at most `max_idle` idle workers; a worker given back beyond that is shut down
  /// (the one idle longest goes first).
  explicit WorkerPool(size_t max_idle = 2) : max_idle_(max_idle) {}
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// A worker for `options`: an idle one started with the same interpreter, package
  /// folder, thread count and OMP wait policy, its stderr re-pointed at
  /// options.log_path (the `redirect_log` request, which also proves it answers within
  /// `ping_timeout_seconds`); else a new process. An idle worker that died or does not
  /// answer is killed and replaced: a crash never reaches the caller from the pool.
  /// Throws IoError when a new worker cannot start (missing interpreter, unwritable log).
  PooledWorker Take(const WorkerOptions& options, double ping_timeout_seconds = 10);

  /// Keeps `worker` for a later Take when it is alive and answers the `release` request
  /// (which frees its problem's modules and tensors); otherwise it is shut down.
  void Give(std::unique_ptr<WorkerClient> worker);

  /// Idle workers held now.
  size_t Idle() const;
  /// Worker processes this pool has started (Take found no idle one that answered).
  int Started() const;

  /// The pool of this process (bench, compare, the queue worker and the GPU runner share
  /// it): 2 idle workers at most; none with KERNELEVOLVE_WORKER_POOL=0 (each run then
  /// starts and ends its own workers, as before issue 22).
  static WorkerPool& Shared();

 private:
  mutable std::mutex mutex_;
  std::deque<std::unique_ptr<WorkerClient>> idle_;  // oldest first
  size_t max_idle_;
  int started_ = 0;
};

}  // namespace kernelevolve::problem
