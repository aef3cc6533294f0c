// Evaluates candidates on this machine, one at a time, through a Platform.
#pragma once

#include <functional>
#include <mutex>
#include <optional>
#include <utility>

#include "core/problem.h"
#include "eval/roofline.h"
#include "exec/evaluator.h"
#include "platforms/platform.h"

namespace kernelevolve::exec {

/// Times eager PyTorch once (the worker's time_baseline call); returns its stats.
using BaselineTimer = std::function<core::TimingStats()>;

class LocalEvaluator : public Evaluator {
 public:
  /// `platform` and `problem` must outlive the evaluator. With a `baseline_timer`,
  /// every correct, timed candidate is followed by an eager measurement. Speedups are
  /// taken against the eager measurement with the fastest call seen so far in the run
  /// (problem.eager_baseline and every paired one): interference only slows eager
  /// down, so a disturbed eager measurement can never inflate a candidate's speedup
  /// (on a busy 2-vCPU VM, 2-thread eager calls were seen at 12 ms instead of 50 us).
  /// Thread-safe.
  LocalEvaluator(platforms::Platform& platform, const core::Problem& problem,
                 platforms::RunOptions run_options, BaselineTimer baseline_timer = nullptr);
  core::Evaluation Evaluate(const core::Candidate& candidate) override;
  /// The eager measurement with the fastest call so far.
  core::TimingStats FastestEager() const;
  /// Offers another eager measurement; returns the fastest so far.
  core::TimingStats RecordEager(const core::TimingStats& eager);
  /// Roofline (issue 5): from now on every correct candidate with a measured
  /// kernel-only median gets Evaluation::roofline, computed by eval::ComputeRoofline
  /// from `work` (eval::EstimateWork of the problem) and the machine's `peaks`.
  /// Without this call, evaluations carry no roofline figures.
  void SetRoofline(const eval::WorkEstimate& work, const eval::MachinePeaks& peaks);

 private:
  platforms::Platform& platform_;
  const core::Problem& problem_;
  platforms::RunOptions run_options_;
  BaselineTimer baseline_timer_;
  mutable std::mutex mutex_;
  core::TimingStats fastest_eager_;
  std::optional<std::pair<eval::WorkEstimate, eval::MachinePeaks>> roofline_;
};

}  // namespace kernelevolve::exec
