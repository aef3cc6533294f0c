// Where a candidate is turned into an Evaluation (build, run, check, time, score).
#pragma once

#include "core/candidate.h"
#include "core/evaluation.h"

namespace kernelevolve::exec {

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// Builds, runs and scores one candidate. Candidate failures come back as a
  /// Status inside the Evaluation; only infrastructure failures throw.
  virtual core::Evaluation Evaluate(const core::Candidate& candidate) = 0;
};

}  // namespace kernelevolve::exec
