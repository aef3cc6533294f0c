// The machine-peaks cache (platforms/cpu/bandwidth_probe.h): file round trip, staleness
// rules, and one real probe on small arrays.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "platforms/cpu/bandwidth_probe.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;
using platforms::cpu::MachinePeakRecord;

class BandwidthProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("ke_peaks_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  static MachinePeakRecord Record() {
    MachinePeakRecord r;
    r.cpu_model = "Test CPU 9000";
    r.threads = 2;
    r.copy_bandwidth_gbps = 12.5;
    r.peak_gflops = 150;
    r.array_bytes = 64LL << 20;
    r.runs = 10;
    r.measured_utc = "2026-11-30T02:10:00Z";
    r.compiler = "/usr/bin/g++";
    return r;
  }

  fs::path dir_;
};

TEST_F(BandwidthProbeTest, CacheFileRoundTrip) {
  const fs::path path = platforms::cpu::PeaksCachePath(dir_, "Test CPU 9000", 2);
  EXPECT_EQ(path.parent_path(), dir_);
  EXPECT_EQ(path.filename().string().rfind("machine_", 0), 0u);
  EXPECT_NE(path, platforms::cpu::PeaksCachePath(dir_, "Test CPU 9000", 1));  // per thread count
  EXPECT_NE(path, platforms::cpu::PeaksCachePath(dir_, "Other CPU", 2));      // per CPU model
  platforms::cpu::WritePeaksCache(path, Record());
  const auto back = platforms::cpu::ReadPeaksCache(path, "Test CPU 9000", 2);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(platforms::cpu::PeakRecordToJson(*back), platforms::cpu::PeakRecordToJson(Record()));
  // A cache hit does not measure.
  bool measured = true;
  platforms::cpu::PeakProbeOptions options;
  options.threads = 2;
  options.compiler = "/nonexistent/g++";  // would fail if it measured
  const auto loaded = platforms::cpu::LoadOrMeasurePeaks(dir_, "Test CPU 9000", options, false, &measured);
  EXPECT_FALSE(measured);
  EXPECT_DOUBLE_EQ(loaded.copy_bandwidth_gbps, 12.5);
  // --remeasure-machine ignores the file (and here fails loudly: no compiler).
  EXPECT_THROW(platforms::cpu::LoadOrMeasurePeaks(dir_, "Test CPU 9000", options, true), core::IoError);
}

TEST_F(BandwidthProbeTest, StaleOrForeignOrBrokenFilesAreIgnored) {
  const fs::path path = dir_ / "machine.json";
  EXPECT_FALSE(platforms::cpu::ReadPeaksCache(path, "Test CPU 9000", 2));  // missing
  MachinePeakRecord old = Record();
  old.probe_version = platforms::cpu::kPeakProbeVersion + 1;
  platforms::cpu::WritePeaksCache(path, old);
  EXPECT_FALSE(platforms::cpu::ReadPeaksCache(path, "Test CPU 9000", 2));  // other version
  platforms::cpu::WritePeaksCache(path, Record());
  EXPECT_FALSE(platforms::cpu::ReadPeaksCache(path, "Test CPU 9000", 4));  // other thread count
  EXPECT_FALSE(platforms::cpu::ReadPeaksCache(path, "Other CPU", 2));      // other machine
  std::ofstream(path) << "{\"cpu_model\": 3";
  EXPECT_FALSE(platforms::cpu::ReadPeaksCache(path, "Test CPU 9000", 2));  // not JSON
  EXPECT_THROW(platforms::cpu::PeakRecordFromJson({{"cpu_model", "x"}}), core::InvalidInputError);
}

TEST_F(BandwidthProbeTest, RealProbeOnSmallArraysGivesPositivePeaks) {
  platforms::cpu::PeakProbeOptions options;
  options.threads = 1;
  options.work_dir = dir_;
  options.array_bytes = 8 << 20;  // small: this checks the plumbing, not the figure
  options.runs = 2;
  bool measured = false;
  const auto record = platforms::cpu::LoadOrMeasurePeaks(dir_, "probe test", options, false, &measured);
  EXPECT_TRUE(measured);
  EXPECT_GT(record.copy_bandwidth_gbps, 0.1);
  EXPECT_GT(record.peak_gflops, 0.1);
  EXPECT_EQ(record.threads, 1);
  EXPECT_EQ(record.cpu_model, "probe test");
  EXPECT_TRUE(fs::exists(platforms::cpu::PeaksCachePath(dir_, "probe test", 1)));
  EXPECT_GT(platforms::cpu::DefaultArrayBytes(), 0);
}

}  // namespace
}  // namespace kernelevolve
