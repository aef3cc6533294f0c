// Where a candidate is turned into an Evaluation (build, run, check, time, score).
#pragma once

#include <stdexcept>

#include "core/candidate.h"
#include "core/evaluation.h"

namespace kernelevolve::exec {

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// Builds, runs and scores one candidate. Candidate failures come back as a
  /// Status inside the Evaluation; only infrastructure failures throw.
  /// An evaluator that waits on others (QueueEvaluator) may instead throw
  /// EvaluationInterrupted once the run's interrupt flag is set.
  virtual core::Evaluation Evaluate(const core::Candidate& candidate) = 0;
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
