// When the search stops: budget, wall time, stall, target (docs/search.md).
#pragma once

#include <optional>
#include <string>

#include "core/evaluation.h"

namespace kernelevolve::search {

/// The stop rules (flags of `kernelevolve optimize`).
struct TerminationOptions {
  int budget = 40;                     // --budget: evaluations (nodes) in total, resumes included
  double time_limit_seconds = 600;     // --time-limit: search wall time, resumes included
  int stall_evaluations = 0;           // --stall K: stop after K evaluations without an
                                       // improvement of at least stall_min_improvement; 0: off
  double stall_min_improvement = 0.01; // --stall-min-improvement PCT / 100 (relative)
  double target_speedup = 0;           // --target-speedup X: stop once fitness >= X; 0: off
};

/// What the stop rules look at, updated once per evaluated node in evaluation order.
///
/// An evaluation "improves" when its fitness reaches reference * (1 + min_improvement),
/// where reference is the fitness of the last improving evaluation (any correct, timed
/// node improves on nothing). Small gains therefore add up: 1.000 -> 1.006 -> 1.011
/// improves at the third node with a 1% threshold.
class SearchProgress {
 public:
  /// `min_improvement`: relative gain that counts (0.01 = 1%).
  explicit SearchProgress(double min_improvement = 0.01) : min_improvement_(min_improvement) {}
  /// Counts one evaluated node.
  void Record(const core::Evaluation& evaluation);
  /// Nodes recorded so far.
  int evaluations() const { return evaluations_; }
  /// Highest fitness so far (0: nothing correct yet).
  double best_fitness() const { return best_; }
  /// Evaluations since the last improving one (all of them when none improved).
  int SinceImprovement() const { return evaluations_ - last_improvement_; }
  /// Multiplies the recorded fitness figures by `factor` (> 0): the search rescored
  /// every node against an eager baseline `factor` times the old one.
  void Rescale(double factor);

 private:
  double min_improvement_;
  int evaluations_ = 0;
  int last_improvement_ = 0;  // evaluation count right after the last improvement
  double reference_ = 0;
  double best_ = 0;
};

/// Checks the stop rules in order: budget, target_reached, stall, time_limit. Returns
/// the stop reason ("budget", "target_reached", "stall", "time_limit") or nullopt to go
/// on. ("exhausted" is decided by the loop when neither policy nor operator has anything
/// left.)
std::optional<std::string> CheckTermination(const TerminationOptions& options,
                                            const SearchProgress& progress,
                                            double elapsed_seconds);

/// Budget and time limit only (no stall or target information).
std::optional<std::string> CheckTermination(const TerminationOptions& options, int evaluations,
                                            double elapsed_seconds);

}  // namespace kernelevolve::search
