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
  /// every correct, timed candidate is followed by an eager measurement, bracketed by the
  /// platform's degraded-machine probe (Platform::DegradedDuring) and taken once more
  /// when the probe flags it (the faster of the two is kept). Speedups are taken against
  /// the eager measurement with the fastest call seen so far in the run
  /// (problem.eager_baseline, a resumed run's saved baseline and every paired one,
  /// flagged or not): interference only slows eager down, so the more eager
  /// measurements the run has, the closer the baseline is to the undisturbed
  /// cost (on a busy 2-vCPU VM, 2-thread eager calls were seen at 12 ms instead of
  /// 50 us). A baseline disturbed in every measurement still inflates speedups; the
  /// search rescores earlier nodes when it improves (SharedBaseline), and the
  /// interleaved confirmation is the final word (docs/measuring.md). Thread-safe.
  LocalEvaluator(platforms::Platform& platform, const core::Problem& problem,
                 platforms::RunOptions run_options, BaselineTimer baseline_timer = nullptr);
  core::Evaluation Evaluate(const core::Candidate& candidate) override;
  /// The eager measurement with the fastest call so far.
  core::TimingStats FastestEager() const;
  /// FastestEager(): one machine scores every node of the run.
  std::optional<core::TimingStats> SharedBaseline() const override { return FastestEager(); }
  /// RecordEager.
  void RecordBaseline(const core::TimingStats& eager) override { RecordEager(eager); }
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

  /// The paired eager timing of `evaluation` under the platform's probe, taken twice
  /// when the first is flagged degraded (the faster of the two kept).
  void TimePairedBaseline(core::Evaluation& evaluation);
};

}  // namespace kernelevolve::exec
