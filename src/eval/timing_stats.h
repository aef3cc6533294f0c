// Statistics over latency samples (microseconds).
#pragma once

#include <vector>

#include "core/timing.h"

namespace kernelevolve::eval {

/// Median, mean, stdev, min/max, p10/p90 and a 95% confidence interval of the median.
/// The interval uses order statistics: for n samples, ranks n/2 -+ 1.96*sqrt(n)/2
/// (normal approximation to the binomial; Conover, "Practical Nonparametric
/// Statistics", 3rd ed., sec. 3.2), clamped to [min, max]. Empty input -> n == 0.
/// Precisely: sorted samples x(1) <= ... <= x(n), CI = [x(r), x(n + 1 - r)] with
/// r = floor(n/2 - 1.96*sqrt(n)/2) raised to at least 1, so the CI is [min, max] for
/// n <= 10 (and always for n < 6). Rounding r down keeps coverage >= 95% (n = 100: [x(40), x(61)]).
/// Median and p10/p90 interpolate linearly between closest ranks (numpy's default,
/// position (n - 1) * q); stdev is the sample standard deviation (n - 1), 0 for n = 1.
/// Throws InvalidInputError for a NaN, infinite or negative sample.
core::TimingStats Summarize(std::vector<double> samples_us);

/// Target precision of adaptive stopping (issue 4): the 95% interval of the median may
/// be at most this fraction of the median on either side (half-width <= 2% of it).
inline constexpr double kTargetRelativeHalfWidth = 0.02;

/// True when `stats` is measured with at least 6 samples (below that Summarize's
/// interval is only [min, max]) and the half-width of its 95% interval of the median,
/// (ci_high_us - ci_low_us) / 2, is at most `relative_half_width` x median_us.
/// The stopping rule of the CPU harness; worker/kernelevolve_worker/baseline.py
/// reimplements it for eager PyTorch.
bool MedianPreciseEnough(const core::TimingStats& stats,
                         double relative_half_width = kTargetRelativeHalfWidth);

/// Speedup = baseline.median / candidate.median. Interval: conservative ratio of the
/// two medians' intervals, [baseline.ci_low / candidate.ci_high,
/// baseline.ci_high / candidate.ci_low]. Zero when either is unmeasured or the candidate
/// median is 0; ci_high is +infinity when only candidate.ci_low_us is 0.
core::Speedup SpeedupOf(const core::TimingStats& baseline, const core::TimingStats& candidate);

/// Noise-robust speedup for a shared machine: interference only ever adds time, so
/// the fastest observed call estimates the undisturbed cost best (J. Chen and
/// J. Revels, "Robust benchmarking in noisy environments", arXiv:1608.04295, 2016).
/// value = baseline.min / candidate.min; the interval is the spread between the
/// minimum and the 10th percentile on each side, [baseline.min / candidate.p10,
/// baseline.p10 / candidate.min] (a spread, not a formal confidence interval).
/// Zero when either is unmeasured or the candidate's minimum is 0.
core::Speedup RobustSpeedupOf(const core::TimingStats& baseline, const core::TimingStats& candidate);

/// Median of the ratios baseline_i / candidate_i of interleaved rounds, with the
/// interval from Summarize() over the ratios (used by the final confirmation).
/// Zero when `ratios` is empty; throws InvalidInputError for a NaN, infinite or
/// negative ratio.
core::Speedup SpeedupFromRatios(std::vector<double> ratios);

}  // namespace kernelevolve::eval
