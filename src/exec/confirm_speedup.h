// Final, interleaved measurement of the best candidate against the eager baseline.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/candidate.h"
#include "core/problem.h"
#include "core/timing.h"
#include "platforms/platform.h"

namespace kernelevolve::exec {

struct Confirmation {
  bool done = false;             // false: not attempted or failed (message says why)
  std::string message;
  int rounds = 0;
  std::vector<double> ratios;    // per round: that round's eager min / candidate min (RobustSpeedupOf)
  core::Speedup speedup;         // median ratio, 95% interval over rounds
  core::TimingStats baseline;    // eager, all rounds pooled (medians of rounds)
  core::TimingStats candidate;   // candidate, all rounds pooled (medians of rounds)
};

/// Runs `rounds` rounds of A B (eager baseline, then the candidate, each timed for
/// run_options.min_time_seconds) so that machine drift hits both alike, and returns
/// the per-round paired ratios (that round's fastest eager call / that round's fastest
/// candidate call). Paired ratios are exchangeable for A vs A, so the interval of
/// eval::SpeedupFromRatios (for R <= 10 rounds, [min, max] of the ratios) calls equal
/// kernels faster, or slower, each with probability 1/2^R: use R >= 8 (the CLI default,
/// 0.4%). A disturbed round moves one ratio, never the low end alone. `time_baseline`
/// times eager PyTorch once (the worker's time_baseline call). The candidate is
/// re-checked for correctness each round; a failure ends the confirmation with
/// done = false.
Confirmation ConfirmSpeedup(const std::function<core::TimingStats()>& time_baseline,
                            platforms::Platform& platform, const core::Problem& problem,
                            const core::Candidate& candidate, platforms::RunOptions run_options,
                            int rounds);

}  // namespace kernelevolve::exec
