#include "problem/worker_pool.h"

#include <cstdlib>
#include <string>
#include <utility>

namespace kernelevolve::problem {
namespace {

/// Whether a worker started with `a` serves a run that asks for `b`: the environment
/// it was started with (interpreter, PYTHONPATH, OMP/MKL threads, OMP_WAIT_POLICY) is
/// fixed for its life; the log is re-pointed per run.
bool SameProcessKind(const WorkerOptions& a, const WorkerOptions& b) {
  return a.python == b.python && a.package_dir == b.package_dir && a.threads == b.threads &&
         a.omp_wait_policy == b.omp_wait_policy;
}

/// `options` with the defaults WorkerClient fills in, so that an empty interpreter
/// matches the resolved one of a pooled worker.
WorkerOptions Resolved(WorkerOptions options) {
  if (options.python.empty()) options.python = DefaultPython();
  if (options.package_dir.empty()) options.package_dir = DefaultWorkerPackageDir();
  return options;
}

}  // namespace

void ReturnToPool::operator()(WorkerClient* worker) const {
  std::unique_ptr<WorkerClient> owned(worker);
  if (pool != nullptr) pool->Give(std::move(owned));
}

WorkerPool::~WorkerPool() {
  std::lock_guard<std::mutex> lock(mutex_);
  idle_.clear();  // ~WorkerClient asks each to exit
}

PooledWorker WorkerPool::Take(const WorkerOptions& options_in, double ping_timeout_seconds) {
  const WorkerOptions options = Resolved(options_in);
  while (true) {
    std::unique_ptr<WorkerClient> candidate;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // The same role first (a GPU runner keeps its CUDA context and compiled models),
      // then any; the most recently used first within each.
      for (const bool same_role : {true, false}) {
        for (auto it = idle_.rbegin(); it != idle_.rend(); ++it) {
          if (SameProcessKind((*it)->options(), options) && (!same_role || (*it)->options().role == options.role)) {
            candidate = std::move(*it);
            idle_.erase(std::next(it).base());
            break;  // `it` is invalid now
          }
        }
        if (candidate) break;
      }
    }
    if (!candidate) break;
    try {
      candidate->RedirectLog(options.log_path, ping_timeout_seconds);
      candidate->SetRole(options.role);
      return PooledWorker(candidate.release(), ReturnToPool{this});
    } catch (const core::Error&) {
      // Died while idle, or does not answer: never trusted again (killed by its destructor).
    }
  }
  auto fresh = std::make_unique<WorkerClient>(options);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++started_;
  }
  return PooledWorker(fresh.release(), ReturnToPool{this});
}

void WorkerPool::Give(std::unique_ptr<WorkerClient> worker) {
  if (!worker || !worker->Alive() || max_idle_ == 0) return;  // shut down by its destructor
  try {
    // Frees the finished run's problem (modules, tensors on the host and the device)
    // before the worker idles; one that does not answer is not kept.
    worker->Call("release", nlohmann::json::object(), 30);
  } catch (const core::Error&) {
    return;
  }
  std::unique_ptr<WorkerClient> evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_.push_back(std::move(worker));
    if (idle_.size() > max_idle_) {
      evicted = std::move(idle_.front());
      idle_.pop_front();
    }
  }
  // `evicted` shuts down here, outside the lock (up to 2 s).
}

size_t WorkerPool::Idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return idle_.size();
}

int WorkerPool::Started() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return started_;
}

WorkerPool& WorkerPool::Shared() {
  // KERNELEVOLVE_WORKER_POOL=0 keeps no idle worker: every run starts its own, as before
  // issue 22 (for comparisons: bench/queue_throughput.sh measures both).
  static WorkerPool pool([] {
    const char* env = std::getenv("KERNELEVOLVE_WORKER_POOL");
    return env != nullptr && std::string(env) == "0" ? size_t{0} : size_t{2};
  }());
  return pool;
}

}  // namespace kernelevolve::problem
