// Summary statistics of repeated latency measurements.
#pragma once

#include <cstdint>

namespace kernelevolve::core {

/// Latency summary, all in microseconds. `ci_low_us`/`ci_high_us` bound the median
/// at 95% confidence (distribution-free order-statistic interval, see
/// eval/timing_stats.h). n == 0 means "not measured".
struct TimingStats {
  int64_t n = 0;
  double median_us = 0;
  double mean_us = 0;
  double stdev_us = 0;
  double min_us = 0;
  double max_us = 0;
  double p10_us = 0;
  double p90_us = 0;
  double ci_low_us = 0;
  double ci_high_us = 0;
  /// True when the measurement stopped because the 95% interval of the median had a
  /// half-width within the target (2% of the median, eval::kTargetRelativeHalfWidth);
  /// false when it stopped at a time or repetition cap, or when no adaptive stopping ran.
  bool converged = false;
  bool Measured() const { return n > 0; }
};

/// A speedup (baseline / candidate) with a 95% interval.
struct Speedup {
  double value = 0;
  double ci_low = 0;
  double ci_high = 0;
  /// True only when the whole interval lies above 1.0.
  bool ClearlyFaster() const { return ci_low > 1.0; }
};

}  // namespace kernelevolve::core
