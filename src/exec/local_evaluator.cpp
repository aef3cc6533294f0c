#include "exec/local_evaluator.h"

#include "eval/fitness.h"

namespace kernelevolve::exec {

LocalEvaluator::LocalEvaluator(platforms::Platform& platform, const core::Problem& problem,
                               platforms::RunOptions run_options)
    : platform_(platform), problem_(problem), run_options_(run_options) {}

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
  evaluation.status = run.status;
  evaluation.message = run.message;
  evaluation.log_excerpt = run.log_excerpt;
  evaluation.correct = run.correct;
  evaluation.checks = run.checks;
  evaluation.latency = run.latency;
  evaluation.kernel_only = run.kernel_only;
  evaluation.run_seconds = run.seconds;
  eval::ScoreEvaluation(evaluation, problem_.eager_baseline);
  return evaluation;
}

}  // namespace kernelevolve::exec
