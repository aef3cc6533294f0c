// Evaluates candidates on this machine, one at a time, through a Platform.
#pragma once

#include <functional>

#include "core/problem.h"
#include "exec/evaluator.h"
#include "platforms/platform.h"

namespace kernelevolve::exec {

/// Times eager PyTorch once (the worker's time_baseline call); returns its stats.
using BaselineTimer = std::function<core::TimingStats()>;

class LocalEvaluator : public Evaluator {
 public:
  /// `platform` and `problem` must outlive the evaluator. With a `baseline_timer`,
  /// every correct, timed candidate is followed by an eager measurement and its
  /// speedup is taken against that paired measurement (this VM drifts by tens of
  /// percent within a minute); without one, against problem.eager_baseline.
  LocalEvaluator(platforms::Platform& platform, const core::Problem& problem,
                 platforms::RunOptions run_options, BaselineTimer baseline_timer = nullptr);
  core::Evaluation Evaluate(const core::Candidate& candidate) override;

 private:
  platforms::Platform& platform_;
  const core::Problem& problem_;
  platforms::RunOptions run_options_;
  BaselineTimer baseline_timer_;
};

}  // namespace kernelevolve::exec
