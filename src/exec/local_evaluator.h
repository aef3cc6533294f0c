// Evaluates candidates on this machine, one at a time, through a Platform.
#pragma once

#include "core/problem.h"
#include "exec/evaluator.h"
#include "platforms/platform.h"

namespace kernelevolve::exec {

class LocalEvaluator : public Evaluator {
 public:
  /// `platform` and `problem` must outlive the evaluator.
  LocalEvaluator(platforms::Platform& platform, const core::Problem& problem,
                 platforms::RunOptions run_options);
  core::Evaluation Evaluate(const core::Candidate& candidate) override;

 private:
  platforms::Platform& platform_;
  const core::Problem& problem_;
  platforms::RunOptions run_options_;
};

}  // namespace kernelevolve::exec
