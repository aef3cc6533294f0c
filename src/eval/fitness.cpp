#include "eval/fitness.h"

#include "eval/timing_stats.h"

namespace kernelevolve::eval {

void ScoreEvaluation(core::Evaluation& evaluation, const core::TimingStats& eager_baseline) {
  evaluation.fitness = 0;
  evaluation.speedup_vs_eager = {};
  if (evaluation.status != core::Status::kOk || !evaluation.correct) return;
  if (!evaluation.latency.Measured() || !eager_baseline.Measured()) return;
  evaluation.speedup_vs_eager = RobustSpeedupOf(eager_baseline, evaluation.latency);
  evaluation.fitness = evaluation.speedup_vs_eager.value;
}

}  // namespace kernelevolve::eval
