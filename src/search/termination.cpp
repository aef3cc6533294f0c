#include "search/termination.h"

#include <algorithm>

namespace kernelevolve::search {

void SearchProgress::Record(const core::Evaluation& evaluation) {
  ++evaluations_;
  if (!evaluation.correct || evaluation.fitness <= 0) return;
  best_ = std::max(best_, evaluation.fitness);
  if (reference_ <= 0 || evaluation.fitness >= reference_ * (1 + min_improvement_)) {
    reference_ = evaluation.fitness;
    last_improvement_ = evaluations_;
  }
}

void SearchProgress::Rescale(double factor) {
  if (!(factor > 0)) return;
  best_ *= factor;
  reference_ *= factor;
}

std::optional<std::string> CheckTermination(const TerminationOptions& options,
                                            const SearchProgress& progress,
                                            double elapsed_seconds) {
  if (progress.evaluations() >= options.budget) return "budget";
  if (options.target_speedup > 0 && progress.best_fitness() >= options.target_speedup) {
    return "target_reached";
  }
  if (options.stall_evaluations > 0 && progress.SinceImprovement() >= options.stall_evaluations) {
    return "stall";
  }
  if (elapsed_seconds >= options.time_limit_seconds) return "time_limit";
  return std::nullopt;
}

std::optional<std::string> CheckTermination(const TerminationOptions& options, int evaluations,
                                            double elapsed_seconds) {
  if (evaluations >= options.budget) return "budget";
  if (elapsed_seconds >= options.time_limit_seconds) return "time_limit";
  return std::nullopt;
}

}  // namespace kernelevolve::search
