// Issue 4 timing: the CI-based stopping rule, the last-level-cache size behind cache
// flushing, and the degraded-machine probe's flagging.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "core/error.h"
#include "eval/result_json.h"
#include "eval/timing_stats.h"
#include "platforms/cpu/cache_flush.h"
#include "platforms/cpu/cpu_platform.h"
#include "platforms/cpu/degraded_probe.h"
#include "platforms/cpu/harness.h"
#include "platforms/cpu/harness_timing.h"
#include "relu_fixtures.h"

namespace kernelevolve::platforms::cpu {
namespace {

namespace fs = std::filesystem;

std::vector<double> Uniform(int n, double center, double spread, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(center - spread, center + spread);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(u(rng));
  return v;
}

TEST(AdaptiveStoppingTest, TightSamplesAreCloseEnoughWideOnesAreNot) {
  // 200 samples within +-1% of 100: the interval of the median is well inside +-2%.
  EXPECT_TRUE(eval::MedianPreciseEnough(eval::Summarize(Uniform(200, 100, 1, 1))));
  // +-50% spread, 20 samples: ranks 6..15 of a wide uniform, half-width ~25%.
  EXPECT_FALSE(eval::MedianPreciseEnough(eval::Summarize(Uniform(20, 100, 50, 2))));
  // The same spread needs many more samples: at n = 20000 the half-width is ~0.7%.
  EXPECT_TRUE(eval::MedianPreciseEnough(eval::Summarize(Uniform(20000, 100, 50, 3))));
  // Fewer than 6 samples never converge, even when identical.
  EXPECT_FALSE(eval::MedianPreciseEnough(eval::Summarize({5, 5, 5, 5, 5})));
  EXPECT_TRUE(eval::MedianPreciseEnough(eval::Summarize({5, 5, 5, 5, 5, 5})));
  EXPECT_FALSE(eval::MedianPreciseEnough(core::TimingStats{}));
}

TEST(AdaptiveStoppingTest, ThresholdIsTheHalfWidthOverTheMedian) {
  core::TimingStats s;
  s.n = 100;
  s.median_us = 100;
  s.ci_low_us = 98;
  s.ci_high_us = 102;  // half-width 2 = 2% of 100
  EXPECT_TRUE(eval::MedianPreciseEnough(s));
  s.ci_high_us = 102.2;  // 2.1%
  EXPECT_FALSE(eval::MedianPreciseEnough(s));
  EXPECT_TRUE(eval::MedianPreciseEnough(s, 0.05));
}

TEST(AdaptiveStoppingTest, StopRuleOrder) {
  TimingBudget b;
  b.min_repetitions = 10;
  b.min_time_seconds = 0.25;
  b.max_repetitions = 1000;
  b.max_time_seconds = 2.0;
  EXPECT_FALSE(StopTiming(b, 9, 1.0, 0.5, true));     // minimum count first, even when precise
  EXPECT_FALSE(StopTiming(b, 50, 0.2, 0.5, true));    // minimum timed time too
  EXPECT_FALSE(StopTiming(b, 50, 0.3, 0.5, false));   // past minimums, not precise, under the cap
  EXPECT_TRUE(StopTiming(b, 50, 0.3, 0.5, true));     // precise -> stop
  EXPECT_TRUE(StopTiming(b, 50, 0.3, 2.0, false));    // wall-time cap
  EXPECT_FALSE(StopTiming(b, 50, 0.1, 5.0, false));   // the cap never cuts the minimums short
  EXPECT_TRUE(StopTiming(b, 1000, 0.0, 0.0, false));  // repetition cap regardless
}

TEST(AdaptiveStoppingTest, ConvergedTravelsInJson) {
  core::TimingStats s = eval::Summarize(Uniform(50, 10, 0.01, 4));
  s.converged = true;
  EXPECT_TRUE(eval::TimingStatsFromJson(eval::TimingStatsToJson(s)).converged);
  s.converged = false;
  EXPECT_FALSE(eval::TimingStatsFromJson(eval::TimingStatsToJson(s)).converged);
  nlohmann::json old = eval::TimingStatsToJson(s);
  old.erase("converged");  // records written before issue 4
  EXPECT_FALSE(eval::TimingStatsFromJson(old).converged);
}

TEST(CacheSizeTest, ParsesSysfsSizes) {
  EXPECT_EQ(ParseCacheSizeText("32768K"), 32LL << 20);
  EXPECT_EQ(ParseCacheSizeText("1024K\n"), 1LL << 20);
  EXPECT_EQ(ParseCacheSizeText(" 8M "), 8LL << 20);
  EXPECT_EQ(ParseCacheSizeText("1G"), 1LL << 30);
  EXPECT_EQ(ParseCacheSizeText("4096"), 4096);
  EXPECT_FALSE(ParseCacheSizeText(""));
  EXPECT_FALSE(ParseCacheSizeText("K"));
  EXPECT_FALSE(ParseCacheSizeText("-32K"));
  EXPECT_FALSE(ParseCacheSizeText("32KB"));
  EXPECT_FALSE(ParseCacheSizeText("32X"));
}

void WriteIndex(const fs::path& dir, const std::string& name, int level, const std::string& type,
                const std::string& size) {
  fs::create_directories(dir / name);
  std::ofstream(dir / name / "level") << level << "\n";
  std::ofstream(dir / name / "type") << type << "\n";
  std::ofstream(dir / name / "size") << size << "\n";
}

TEST(CacheSizeTest, PicksTheHighestLevelAndFallsBack) {
  const fs::path dir = fs::temp_directory_path() / ("ke_llc_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  WriteIndex(dir, "index0", 1, "Data", "48K");
  WriteIndex(dir, "index1", 1, "Instruction", "32K");
  WriteIndex(dir, "index2", 2, "Unified", "2048K");
  WriteIndex(dir, "index3", 3, "Unified", "1536K");  // smaller than L2 but the last level
  LastLevelCache llc = ReadLastLevelCache(dir);
  EXPECT_EQ(llc.bytes, 1536LL << 10);
  EXPECT_NE(llc.source.find("index3/size (level 3)"), std::string::npos) << llc.source;

  WriteIndex(dir, "index4", 4, "Instruction", "64M");  // an instruction cache never counts
  EXPECT_EQ(ReadLastLevelCache(dir).bytes, 1536LL << 10);

  LastLevelCache none = ReadLastLevelCache(dir / "missing");
  EXPECT_EQ(none.bytes, kFallbackLastLevelCacheBytes);
  EXPECT_NE(none.source.find("fallback 32 MiB"), std::string::npos) << none.source;
  fs::remove_all(dir);
}

TEST(CacheSizeTest, FlusherWritesItsBuffer) {
  CacheFlusher flusher(1 << 20);
  EXPECT_EQ(flusher.Bytes(), 1 << 20);
  flusher.Flush();  // must not crash; the write itself is opaque to the test
  flusher.Flush();
}

TEST(DegradedProbeTest, FlagsSpeedChangesAndSlowStates) {
  EXPECT_FALSE(DegradedReason(5000, 5200, 0));           // 4% apart: fine
  EXPECT_FALSE(DegradedReason(5000, 6400, 0));           // 1.28x: under the threshold
  auto slower = DegradedReason(5000, 10000, 0);          // one core lost mid-measurement
  ASSERT_TRUE(slower);
  EXPECT_NE(slower->find("changed speed"), std::string::npos) << *slower;
  EXPECT_TRUE(DegradedReason(10000, 5000, 0));           // sped up: the first part was degraded
  auto slow = DegradedReason(10000, 10500, 5000);        // steady but 2x the fastest probe
  ASSERT_TRUE(slow);
  EXPECT_NE(slow->find("slow throughout"), std::string::npos) << *slow;
  EXPECT_FALSE(DegradedReason(5100, 5200, 5000));        // near the reference
  EXPECT_FALSE(DegradedReason(0, 5000, 5000));           // no probe
  EXPECT_TRUE(DegradedReason(5000, 6000, 0, 1.1));       // custom threshold
}

TEST(DegradedProbeTest, ProbeTakesTimeOnOneAndTwoThreads) {
  EXPECT_GT(RunFmaProbeUs(1, 20000), 0.0);
  EXPECT_GT(RunFmaProbeUs(2, 20000), 0.0);
  // More work takes longer (20x the iterations; loose to survive a busy machine).
  double small = 1e30, large = 1e30;
  for (int i = 0; i < 3; ++i) {
    small = std::min(small, RunFmaProbeUs(1, 10000));
    large = std::min(large, RunFmaProbeUs(1, 200000));
  }
  EXPECT_GT(large, 2 * small);
}

TEST(HarnessTimingFlagsTest, ParsesIssue4Flags) {
  HarnessOptions o = ParseHarnessArgs({"--kernel", "k.so", "--manifest", "m.json", "--max-time-seconds", "3.5",
                                       "--flush-cache", "--probe-threads", "2"});
  EXPECT_DOUBLE_EQ(o.max_time_seconds, 3.5);
  EXPECT_TRUE(o.flush_cache);
  EXPECT_EQ(o.probe_threads, 2);
  HarnessOptions d = ParseHarnessArgs({"--kernel", "k.so", "--manifest", "m.json"});
  EXPECT_FALSE(d.flush_cache);
  EXPECT_EQ(d.probe_threads, 1);
  EXPECT_THROW(ParseHarnessArgs({"--kernel", "k", "--manifest", "m", "--max-time-seconds", "x"}),
               core::InvalidInputError);
}

TEST(HarnessTimingFlagsTest, VerdictCarriesTheProbe) {
  RunResult r;
  r.status = core::Status::kOk;
  r.correct = true;
  r.probe_before_us = 5000;
  r.probe_after_us = 9000;
  RunResult back = HarnessVerdictFromJson(HarnessVerdictToJson(r));
  EXPECT_DOUBLE_EQ(back.probe_before_us, 5000);
  EXPECT_DOUBLE_EQ(back.probe_after_us, 9000);
  EXPECT_FALSE(HarnessVerdictToJson(RunResult{}).contains("probe"));
}

// End to end through the sandboxed harness: flushing, the probes and the time cap.
TEST(HarnessTimingFlagsTest, FlushedRunCarriesProbesAndStopsAtTheCap) {
  const fs::path root = fs::temp_directory_path() / ("ke_adaptive_test_" + std::to_string(::getpid()));
  fs::create_directories(root / "fixtures");
  const core::Problem problem = testing_util::WriteReluFixtures(root / "fixtures");
  CpuPlatform platform(root / "cache", KE_HARNESS_PATH);
  core::Candidate relu;
  relu.source = R"(#include <dlpack/dlpack.h>
#include <cstdint>
extern "C" int kernelevolve_entry(const DLTensor* in, int32_t, DLTensor* out, int32_t) {
  const float* x = static_cast<const float*>(in[0].data);
  float* y = static_cast<float*>(out[0].data);
  for (int64_t i = 0; i < in[0].shape[0] * in[0].shape[1]; ++i) y[i] = x[i] > 0 ? x[i] : 0;
  return 0;
})";
  const BuildResult build = platform.Build(relu);
  ASSERT_EQ(build.status, core::Status::kOk) << build.log;
  RunOptions options;
  options.warmup_seconds = 0.005;
  options.min_time_seconds = 0.001;
  options.min_repetitions = 5;
  options.max_repetitions = 100000;
  options.max_time_seconds = 0.1;
  options.flush_cache = true;
  options.timeout_seconds = 20;
  options.memory_limit_bytes = 1LL << 30;
  const RunResult result = platform.Run(build, problem, options);
  ASSERT_EQ(result.status, core::Status::kOk) << result.message << "\n" << result.log_excerpt;
  EXPECT_NE(result.log_excerpt.find("flushing"), std::string::npos) << result.log_excerpt;
  EXPECT_GE(result.latency.n, 5);
  EXPECT_LT(result.latency.n, 100000);  // converged or capped long before the repetition cap
  EXPECT_GT(result.probe_before_us, 0);
  EXPECT_GT(result.probe_after_us, 0);
  EXPECT_DOUBLE_EQ(result.probe_reference_us, std::min(result.probe_before_us, result.probe_after_us));
  EXPECT_EQ(result.degraded, DegradedReason(result.probe_before_us, result.probe_after_us,
                                            result.probe_reference_us).has_value());
  EXPECT_LT(result.seconds, 10);
  fs::remove_all(root);
}

}  // namespace
}  // namespace kernelevolve::platforms::cpu
