#include "eval/timing_stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/error.h"

namespace kernelevolve::eval {
namespace {

std::vector<double> Range(int n) {  // 1, 2, ..., n
  std::vector<double> v;
  for (int i = 1; i <= n; ++i) v.push_back(i);
  return v;
}

TEST(TimingStatsTest, EmptyIsUnmeasured) {
  const auto stats = Summarize({});
  EXPECT_EQ(stats.n, 0);
  EXPECT_FALSE(stats.Measured());
}

TEST(TimingStatsTest, SingleSample) {
  const auto stats = Summarize({5.0});
  EXPECT_EQ(stats.n, 1);
  EXPECT_EQ(stats.median_us, 5.0);
  EXPECT_EQ(stats.stdev_us, 0.0);
  EXPECT_EQ(stats.ci_low_us, 5.0);
  EXPECT_EQ(stats.ci_high_us, 5.0);
}

TEST(TimingStatsTest, KnownData) {
  // Unsorted on purpose; numpy.percentile([1..10], [10, 50, 90]) = 1.9, 5.5, 9.1.
  const auto stats = Summarize({7, 3, 10, 1, 5, 9, 2, 8, 4, 6});
  EXPECT_EQ(stats.n, 10);
  EXPECT_DOUBLE_EQ(stats.median_us, 5.5);
  EXPECT_DOUBLE_EQ(stats.mean_us, 5.5);
  EXPECT_DOUBLE_EQ(stats.stdev_us, std::sqrt(82.5 / 9.0));
  EXPECT_EQ(stats.min_us, 1.0);
  EXPECT_EQ(stats.max_us, 10.0);
  EXPECT_DOUBLE_EQ(stats.p10_us, 1.9);
  EXPECT_DOUBLE_EQ(stats.p90_us, 9.1);
  EXPECT_EQ(Summarize({3, 1, 2}).median_us, 2.0);
}

TEST(TimingStatsTest, ConfidenceIntervalRanks) {
  // n < 6 and n <= 10: [min, max].
  for (int n : {2, 3, 5, 6, 10}) {
    const auto stats = Summarize(Range(n));
    EXPECT_EQ(stats.ci_low_us, 1.0) << n;
    EXPECT_EQ(stats.ci_high_us, n) << n;
  }
  // n = 11: r = floor(5.5 - 3.25) = 2, s = 10.
  EXPECT_EQ(Summarize(Range(11)).ci_low_us, 2.0);
  EXPECT_EQ(Summarize(Range(11)).ci_high_us, 10.0);
  // n = 100: r = floor(50 - 9.8) = 40, s = 61 (the textbook interval for n = 100).
  const auto stats = Summarize(Range(100));
  EXPECT_EQ(stats.ci_low_us, 40.0);
  EXPECT_EQ(stats.ci_high_us, 61.0);
  EXPECT_LE(stats.ci_low_us, stats.median_us);
  EXPECT_GE(stats.ci_high_us, stats.median_us);
}

TEST(TimingStatsTest, ConfidenceIntervalCoversTrueMedianAbout95Percent) {
  // Lognormal latencies (median exp(mu) = e^3); 2000 experiments of n = 100.
  std::mt19937 rng(2024);
  std::lognormal_distribution<double> latency(3.0, 0.5);
  const double true_median = std::exp(3.0);
  int covered = 0;
  const int trials = 2000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> samples(100);
    for (double& x : samples) x = latency(rng);
    const auto stats = Summarize(samples);
    covered += stats.ci_low_us <= true_median && true_median <= stats.ci_high_us;
  }
  const double coverage = static_cast<double>(covered) / trials;
  // [x(40), x(61)] has exact coverage 0.9648 (binomial); the estimate's sd is ~0.004.
  EXPECT_GE(coverage, 0.945);
  EXPECT_LE(coverage, 0.985);
}

TEST(TimingStatsTest, IntervalShrinksWithMoreSamples) {
  std::mt19937 rng(7);
  std::normal_distribution<double> latency(100.0, 5.0);
  double previous_width = std::numeric_limits<double>::infinity();
  for (int n : {20, 200, 2000}) {
    std::vector<double> samples(n);
    for (double& x : samples) x = latency(rng);
    const auto stats = Summarize(samples);
    const double width = stats.ci_high_us - stats.ci_low_us;
    EXPECT_LT(width, previous_width * 0.6) << n;
    EXPECT_LE(stats.ci_low_us, 100.5);
    EXPECT_GE(stats.ci_high_us, 99.5);
    previous_width = width;
  }
}

TEST(TimingStatsTest, RejectsInvalidSamples) {
  EXPECT_THROW(Summarize({1.0, std::nan("")}), core::InvalidInputError);
  EXPECT_THROW(Summarize({1.0, std::numeric_limits<double>::infinity()}), core::InvalidInputError);
  EXPECT_THROW(Summarize({-1.0}), core::InvalidInputError);
}

TEST(TimingStatsTest, SpeedupOfUsesConservativeInterval) {
  core::TimingStats baseline;
  baseline.n = 50;
  baseline.median_us = 100;
  baseline.ci_low_us = 90;
  baseline.ci_high_us = 110;
  core::TimingStats candidate;
  candidate.n = 50;
  candidate.median_us = 50;
  candidate.ci_low_us = 40;
  candidate.ci_high_us = 60;
  const auto speedup = SpeedupOf(baseline, candidate);
  EXPECT_DOUBLE_EQ(speedup.value, 2.0);
  EXPECT_DOUBLE_EQ(speedup.ci_low, 1.5);
  EXPECT_DOUBLE_EQ(speedup.ci_high, 2.75);
  EXPECT_TRUE(speedup.ClearlyFaster());

  candidate.median_us = 95;
  candidate.ci_low_us = 85;
  candidate.ci_high_us = 105;
  const auto close = SpeedupOf(baseline, candidate);
  EXPECT_GT(close.value, 1.0);
  EXPECT_FALSE(close.ClearlyFaster());  // interval [0.857, 1.29] straddles 1

  EXPECT_EQ(SpeedupOf(baseline, core::TimingStats{}).value, 0.0);
  EXPECT_EQ(SpeedupOf(core::TimingStats{}, candidate).value, 0.0);
  candidate.ci_low_us = 0;
  EXPECT_TRUE(std::isinf(SpeedupOf(baseline, candidate).ci_high));
}

TEST(TimingStatsTest, SpeedupFromRatios) {
  EXPECT_EQ(SpeedupFromRatios({}).value, 0.0);
  const auto speedup = SpeedupFromRatios({1.2, 1.1, 1.3, 1.25, 1.15});
  EXPECT_DOUBLE_EQ(speedup.value, 1.2);
  EXPECT_DOUBLE_EQ(speedup.ci_low, 1.1);  // n < 6: [min, max]
  EXPECT_DOUBLE_EQ(speedup.ci_high, 1.3);
  EXPECT_TRUE(speedup.ClearlyFaster());
  std::vector<double> ratios;
  for (int i = 99; i >= 0; --i) ratios.push_back(0.8 + 0.004 * i);  // 1.196 .. 0.8
  const auto wide = SpeedupFromRatios(ratios);
  EXPECT_NEAR(wide.value, 0.998, 1e-12);
  EXPECT_NEAR(wide.ci_low, 0.8 + 0.004 * 39, 1e-12);   // x(40) = 0.956
  EXPECT_NEAR(wide.ci_high, 0.8 + 0.004 * 60, 1e-12);  // x(61) = 1.04
  EXPECT_FALSE(wide.ClearlyFaster());
}

}  // namespace
}  // namespace kernelevolve::eval

namespace kernelevolve::eval {
namespace {

TEST(TimingStatsTest, RobustSpeedupUsesTheFastestCallsAndIgnoresSlowBursts) {
  // Eager: fast calls of 100 us, half of them disturbed to 10 ms by a busy machine.
  std::vector<double> eager;
  for (int i = 0; i < 40; ++i) eager.push_back(i % 2 ? 10000.0 : 100.0 + i * 0.1);
  std::vector<double> candidate;
  for (int i = 0; i < 40; ++i) candidate.push_back(50.0 + i * 0.05);
  const auto b = Summarize(eager);
  const auto c = Summarize(candidate);
  EXPECT_GT(SpeedupOf(b, c).value, 50.0);  // the median ratio is fooled by the bursts
  const auto r = RobustSpeedupOf(b, c);
  EXPECT_NEAR(r.value, 100.0 / 50.0, 1e-9);
  EXPECT_LE(r.ci_low, r.value);
  EXPECT_GE(r.ci_high, r.value);
  EXPECT_LT(r.ci_high, 3.0);
  EXPECT_EQ(RobustSpeedupOf(b, core::TimingStats{}).value, 0.0);
}

}  // namespace
}  // namespace kernelevolve::eval
