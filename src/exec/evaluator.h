// Where a candidate is turned into an Evaluation (build, run, check, time, score).
#pragma once

#include <optional>
#include <stdexcept>

#include "core/candidate.h"
#include "core/evaluation.h"
#include "core/timing.h"

namespace kernelevolve::exec {

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// Builds, runs and scores one candidate. Candidate failures come back as a
  /// Status inside the Evaluation; only infrastructure failures throw.
  /// An evaluator that waits on others (QueueEvaluator) may instead throw
  /// EvaluationInterrupted once the run's interrupt flag is set.
  virtual core::Evaluation Evaluate(const core::Candidate& candidate) = 0;
  /// The eager measurement every node of the run is scored against (the fastest eager
  /// call seen so far on this machine), or nullopt when the evaluator has none that holds
  /// for every node (QueueEvaluator: each worker scores against its own machine's eager
  /// PyTorch). The search rescores all nodes against it when its fastest call improves.
  virtual std::optional<core::TimingStats> SharedBaseline() const { return std::nullopt; }
  /// Offers an eager measurement taken earlier on this machine (a resumed run's saved
  /// SharedBaseline) to the shared baseline; no-op without one.
  virtual void RecordBaseline(const core::TimingStats& eager) { (void)eager; }
};

/// Thrown by Evaluate when SIGINT/SIGTERM arrived while it waited (issue 22: a queued
/// run with no worker used to wait for --queue-timeout). Nothing was measured: the
/// search drops the candidate as it drops every unevaluated one when interrupted, and
/// the run stays resumable.
class EvaluationInterrupted : public std::runtime_error {
 public:
  EvaluationInterrupted() : std::runtime_error("interrupted while waiting for the evaluation") {}
};

}  // namespace kernelevolve::exec
