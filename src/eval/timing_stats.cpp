#include "eval/timing_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include "core/error.h"

namespace kernelevolve::eval {
namespace {

// Two-sided 95% standard-normal quantile.
constexpr double kZ95 = 1.959963984540054;

// Percentile q in [0, 1] of sorted data, linear interpolation between closest ranks
// (numpy.percentile's default "linear" method: position (n - 1) * q).
double Percentile(const std::vector<double>& sorted, double q) {
  const double position = static_cast<double>(sorted.size() - 1) * q;
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted[below] + fraction * (sorted[above] - sorted[below]);
}

}  // namespace

core::TimingStats Summarize(std::vector<double> samples_us) {
  core::TimingStats stats;
  if (samples_us.empty()) return stats;
  for (double sample : samples_us) {
    if (!std::isfinite(sample) || sample < 0) {
      throw core::InvalidInputError("timing sample " + std::to_string(sample) +
                                    " is not a finite non-negative number");
    }
  }
  std::sort(samples_us.begin(), samples_us.end());
  const auto& s = samples_us;
  const std::size_t n = s.size();
  stats.n = static_cast<int64_t>(n);
  stats.min_us = s.front();
  stats.max_us = s.back();
  stats.median_us = Percentile(s, 0.5);
  stats.p10_us = Percentile(s, 0.1);
  stats.p90_us = Percentile(s, 0.9);
  stats.mean_us = std::accumulate(s.begin(), s.end(), 0.0) / static_cast<double>(n);
  if (n > 1) {
    double squares = 0;
    for (double x : s) squares += (x - stats.mean_us) * (x - stats.mean_us);
    stats.stdev_us = std::sqrt(squares / static_cast<double>(n - 1));
  }
  // 1-based ranks r = floor(n/2 - z*sqrt(n)/2) and s = n + 1 - r, clamped to [1, n].
  const double half_width = kZ95 * std::sqrt(static_cast<double>(n)) / 2.0;
  const auto low_rank = static_cast<int64_t>(std::floor(static_cast<double>(n) / 2.0 - half_width));
  if (n < 6 || low_rank < 1) {
    stats.ci_low_us = stats.min_us;
    stats.ci_high_us = stats.max_us;
  } else {
    const auto high_rank = static_cast<int64_t>(n) + 1 - low_rank;
    stats.ci_low_us = s[static_cast<std::size_t>(low_rank - 1)];
    stats.ci_high_us = s[static_cast<std::size_t>(high_rank - 1)];
  }
  return stats;
}

bool MedianPreciseEnough(const core::TimingStats& stats, double relative_half_width) {
  if (stats.n < 6 || stats.median_us <= 0) return false;
  return (stats.ci_high_us - stats.ci_low_us) / 2.0 <= relative_half_width * stats.median_us;
}

core::Speedup RobustSpeedupOf(const core::TimingStats& baseline,
                              const core::TimingStats& candidate) {
  if (!baseline.Measured() || !candidate.Measured() || candidate.min_us <= 0) return {};
  core::Speedup speedup;
  speedup.value = baseline.min_us / candidate.min_us;
  speedup.ci_low = candidate.p10_us > 0 ? baseline.min_us / candidate.p10_us : 0.0;
  speedup.ci_high = baseline.p10_us / candidate.min_us;
  if (speedup.ci_low > speedup.value) speedup.ci_low = speedup.value;
  if (speedup.ci_high < speedup.value) speedup.ci_high = speedup.value;
  return speedup;
}

core::Speedup SpeedupOf(const core::TimingStats& baseline, const core::TimingStats& candidate) {
  if (!baseline.Measured() || !candidate.Measured() || candidate.median_us <= 0) return {};
  core::Speedup speedup;
  speedup.value = baseline.median_us / candidate.median_us;
  speedup.ci_low = candidate.ci_high_us > 0 ? baseline.ci_low_us / candidate.ci_high_us : 0.0;
  speedup.ci_high = candidate.ci_low_us > 0 ? baseline.ci_high_us / candidate.ci_low_us
                                            : std::numeric_limits<double>::infinity();
  return speedup;
}

core::Speedup SpeedupFromRatios(std::vector<double> ratios) {
  const core::TimingStats stats = Summarize(std::move(ratios));
  if (!stats.Measured()) return {};
  return {stats.median_us, stats.ci_low_us, stats.ci_high_us};
}

}  // namespace kernelevolve::eval
