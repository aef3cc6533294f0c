#include "exec/evaluation_pool.h"

#include "core/error.h"

namespace kernelevolve::exec {

EvaluationPool::EvaluationPool(Evaluator& evaluator, int jobs)
    : evaluator_(evaluator), jobs_(std::max(1, jobs)) {
  if (jobs_ > 1) {
    for (int i = 0; i < jobs_; ++i) threads_.emplace_back([this] { Work(); });
  }
}

EvaluationPool::~EvaluationPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  work_ready_.notify_all();
  for (auto& t : threads_) t.join();
}

void EvaluationPool::Submit(int64_t ticket, core::Candidate candidate) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back({ticket, std::move(candidate)});
    ++in_flight_;
  }
  work_ready_.notify_one();
}

void EvaluationPool::Work() {
  while (true) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    Done done;
    done.completion.ticket = job.ticket;
    try {
      done.completion.evaluation = evaluator_.Evaluate(job.candidate);
    } catch (...) {
      done.error = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      done_.push_back(std::move(done));
    }
    done_ready_.notify_one();
  }
}

EvaluationPool::Completion EvaluationPool::WaitAny() {
  if (in_flight_ == 0) throw core::InternalError("EvaluationPool::WaitAny: nothing in flight");
  Done done;
  if (threads_.empty()) {
    Job job = std::move(queue_.front());
    queue_.pop_front();
    --in_flight_;
    Completion completion{job.ticket, evaluator_.Evaluate(job.candidate)};
    return completion;
  }
  {
    std::unique_lock lock(mutex_);
    done_ready_.wait(lock, [&] { return !done_.empty(); });
    done = std::move(done_.front());
    done_.pop_front();
    --in_flight_;
  }
  if (done.error) std::rethrow_exception(done.error);
  return std::move(done.completion);
}

}  // namespace kernelevolve::exec
