// N candidates in flight: evaluations on worker threads, results in completion order.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "core/candidate.h"
#include "core/evaluation.h"
#include "exec/evaluator.h"

namespace kernelevolve::exec {

/// Evaluates submitted candidates on `jobs` threads through one Evaluator, which must
/// then be thread-safe (LocalEvaluator over a GatedPlatform is). With jobs == 1 no
/// thread is started: WaitAny evaluates the oldest submission on the caller's thread,
/// so a run with fakes is exactly reproducible. Submit and WaitAny are called from one
/// thread (the search loop).
class EvaluationPool {
 public:
  /// One finished evaluation: the ticket given to Submit and what was measured.
  struct Completion {
    int64_t ticket = -1;
    core::Evaluation evaluation;
  };

  /// `evaluator` must outlive the pool. jobs < 1 counts as 1.
  EvaluationPool(Evaluator& evaluator, int jobs);
  /// Waits for evaluations already running; submissions not started are dropped.
  ~EvaluationPool();
  EvaluationPool(const EvaluationPool&) = delete;
  EvaluationPool& operator=(const EvaluationPool&) = delete;

  /// Queues one candidate under a caller-chosen ticket.
  void Submit(int64_t ticket, core::Candidate candidate);
  /// Blocks until one submission is evaluated and returns it (completion order). An
  /// exception thrown by the evaluator (an infrastructure failure) is rethrown here.
  /// Throws InternalError when nothing is in flight.
  Completion WaitAny();
  /// Submitted and not yet returned by WaitAny.
  int InFlight() const { return in_flight_; }
  /// Evaluations that may run at once (threads; 1: none, see above).
  int jobs() const { return jobs_; }

 private:
  struct Job {
    int64_t ticket;
    core::Candidate candidate;
  };
  struct Done {
    Completion completion;
    std::exception_ptr error;
  };
  void Work();

  Evaluator& evaluator_;
  int jobs_;
  int in_flight_ = 0;
  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable done_ready_;
  std::deque<Job> queue_;
  std::deque<Done> done_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace kernelevolve::exec
