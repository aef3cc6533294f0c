#include "exec/local_evaluator.h"

#include "eval/fitness.h"

namespace kernelevolve::exec {

LocalEvaluator::LocalEvaluator(platforms::Platform& platform, const core::Problem& problem,
                               platforms::RunOptions run_options, BaselineTimer baseline_timer)
    : platform_(platform),
      problem_(problem),
      run_options_(run_options),
      baseline_timer_(std::move(baseline_timer)),
      fastest_eager_(problem.eager_baseline) {}

core::TimingStats LocalEvaluator::FastestEager() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fastest_eager_;
}

core::TimingStats LocalEvaluator::RecordEager(const core::TimingStats& eager) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (eager.Measured() && (!fastest_eager_.Measured() || eager.min_us < fastest_eager_.min_us)) {
    fastest_eager_ = eager;
  }
  return fastest_eager_;
}

void LocalEvaluator::TimePairedBaseline(core::Evaluation& evaluation) {
  core::TimingStats first, second;
  std::optional<std::string> degraded =
      platform_.DegradedDuring([&] { first = baseline_timer_(); }, run_options_.threads);
  evaluation.paired_baseline = first;
  if (!degraded) return;
  degraded = platform_.DegradedDuring([&] { second = baseline_timer_(); }, run_options_.threads);
  // Interference only adds time: the faster of the two is the better estimate, flagged
  // or not, and a faster eager call can only lower the run's baseline.
  if (second.Measured() && (!first.Measured() || second.min_us < first.min_us)) evaluation.paired_baseline = second;
  if (degraded) {
    evaluation.log_excerpt = "paired eager timing flagged degraded twice (the faster of the two kept): " + *degraded +
                             "\n" + evaluation.log_excerpt;
  }
}

void LocalEvaluator::SetRoofline(const eval::WorkEstimate& work, const eval::MachinePeaks& peaks) {
  std::lock_guard<std::mutex> lock(mutex_);
  roofline_.emplace(work, peaks);
}

core::Evaluation LocalEvaluator::Evaluate(const core::Candidate& candidate) {
  core::Evaluation evaluation;
  platforms::BuildResult build = platform_.Build(candidate);
  evaluation.build_seconds = build.seconds;
  evaluation.build_cache_hit = build.cache_hit;
  if (build.status != core::Status::kOk) {
    evaluation.status = build.status;
    evaluation.message = build.message;
    evaluation.log_excerpt = build.log;
    return evaluation;
  }
  platforms::RunResult run = platform_.Run(build, problem_, run_options_);
  // Issue 4: a timing taken while the machine changed speed (or was slow throughout)
  // is measured once more; if the second is degraded too, it is kept and says so.
  if (run.status == core::Status::kOk && run.degraded) run = platform_.Run(build, problem_, run_options_);
  if (run.status == core::Status::kOk && run.degraded) {
    run.log_excerpt = "timing flagged degraded (measured twice): " + run.degraded_reason + "\n" + run.log_excerpt;
  }
  evaluation.status = run.status;
  evaluation.message = run.message;
  evaluation.log_excerpt = run.log_excerpt;
  evaluation.correct = run.correct;
  evaluation.checks = run.checks;
  evaluation.latency = run.latency;
  evaluation.kernel_only = run.kernel_only;
  evaluation.run_seconds = run.seconds;
  const bool timed = run.status == core::Status::kOk && run.correct && run.latency.Measured();
  if (timed && baseline_timer_) TimePairedBaseline(evaluation);
  eval::ScoreEvaluation(evaluation, RecordEager(evaluation.paired_baseline));
  if (evaluation.correct && evaluation.kernel_only.Measured()) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (roofline_) {
      evaluation.roofline =
          eval::ComputeRoofline(roofline_->first, evaluation.kernel_only.median_us * 1e-6, roofline_->second);
    }
  }
  return evaluation;
}

}  // namespace kernelevolve::exec
