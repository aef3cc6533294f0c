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
  /// Rounds whose eager timing or candidate run the platform's machine probe flagged
  /// (Platform::DegradedDuring, RunResult::degraded) even after one retake, and why
  /// (the first such round's reason, prefixed "eager: " or "kernel: ").
  int disturbed_rounds = 0;
  int retaken_rounds = 0;        // rounds taken again once because the probe flagged them
  std::string disturbed_reason;
  /// True when `speedup` comes from the rounds the probe did not flag (all rounds when
  /// none was flagged); false when too few were clean (kMinCleanRounds) and `speedup`
  /// is the median of every round, disturbed ones included.
  bool from_clean_rounds = true;

  /// The claim "verified faster": the interval lies above 1.0 and it comes from rounds
  /// measured on an undisturbed machine (contention can slow eager's many-barrier calls
  /// far more than a kernel's, so a disturbed round's ratio is not evidence).
  bool VerifiedFaster() const { return done && from_clean_rounds && speedup.ClearlyFaster(); }
};

/// Fewest clean rounds whose interval a confirmation may call verified: [min, max] of 3
/// exchangeable ratios misses an A/A 1.0 with probability 1/8 one-sided (docs/measuring.md).
inline constexpr int kMinCleanRounds = 3;

/// Runs `rounds` rounds of A B (eager baseline, then the candidate, each timed for
/// run_options.min_time_seconds) so that machine drift hits both alike, and returns
/// the per-round paired ratios (that round's fastest eager call / that round's fastest
/// candidate call). Paired ratios are exchangeable for A vs A, so the interval of
/// eval::SpeedupFromRatios (for R <= 10 rounds, [min, max] of the ratios) calls equal
/// kernels faster, or slower, each with probability 1/2^R: use R >= 8 (the CLI default,
/// 0.4%). A disturbed round moves one ratio, never the low end alone. `time_baseline`
/// times eager PyTorch once (the worker's time_baseline call). The candidate is
/// re-checked for correctness each round; a failure ends the confirmation with
/// done = false. Each eager timing runs inside platform.DegradedDuring; a round the probe
/// flags (eager or candidate) is taken once more, and one still flagged counts in
/// disturbed_rounds and is left out of `speedup` when at least
/// max(kMinCleanRounds, half the rounds) clean ones remain; else `speedup` uses every
/// round and the confirmation cannot verify (from_clean_rounds = false).
Confirmation ConfirmSpeedup(const std::function<core::TimingStats()>& time_baseline,
                            platforms::Platform& platform, const core::Problem& problem,
                            const core::Candidate& candidate, platforms::RunOptions run_options,
                            int rounds);

}  // namespace kernelevolve::exec
