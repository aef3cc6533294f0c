// --profile-during (issue 6): its default and range, the refusal on --target cpu (optimize
// and bench, before any work), its round trip through the stored flags of a run (resume),
// and how in-search profiles are listed after the summary table.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "cli/bench_command.h"
#include "cli/gpu_profiling.h"
#include "cli/optimize_command.h"
#include "cli/run_config.h"
#include "core/error.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

/// The message of the InvalidInputError `f` throws ("" when it throws none).
template <typename F>
std::string InvalidInputMessage(F f) {
  try {
    f();
  } catch (const core::InvalidInputError& e) {
    return e.what();
  }
  return "";
}

TEST(ProfileDuringFlag, DefaultsAndRange) {
  EXPECT_EQ(ProfileDuringFor(-1, true), 1);
  EXPECT_EQ(ProfileDuringFor(-1, false), 0);
  EXPECT_EQ(ProfileDuringFor(0, false), 0);
  EXPECT_EQ(ProfileDuringFor(8, true), 8);
  EXPECT_NE(InvalidInputMessage([] { ProfileDuringFor(9, true); })
                .find("--profile-during 9: give 0 (no profiling during the search) to 8"),
            std::string::npos);
  EXPECT_NE(InvalidInputMessage([] { ProfileDuringFor(-2, true); }).find("--profile-during -2"),
            std::string::npos);
  const std::string cpu = InvalidInputMessage([] { ProfileDuringFor(2, false); });
  EXPECT_NE(cpu.find("--profile-during 2"), std::string::npos) << cpu;
  EXPECT_NE(cpu.find("needs a GPU target"), std::string::npos) << cpu;
}

class ProfileDuringCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("ke_profdur_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "suite");
    std::ofstream(dir_ / "suite" / "relu.py") << "# not loaded: the flag is refused first\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ProfileDuringCliTest, OptimizeAndBenchRefuseItOnCpuBeforeAnyWork) {
  OptimizeOptions o;
  o.problem_path = dir_ / "suite" / "relu.py";
  o.target = "cpu";
  o.profile_during = 2;
  o.out_dir = dir_ / "run";
  const std::string message = InvalidInputMessage([&] { RunOptimize(o); });
  EXPECT_NE(message.find("--profile-during 2: Nsight Compute profiling needs a GPU target"),
            std::string::npos)
      << message;
  EXPECT_FALSE(fs::exists(o.out_dir));  // refused before the run directory exists

  BenchOptions b;
  b.suite_dir = dir_ / "suite";
  b.profile_during = 2;
  b.out_dir = dir_ / "bench";
  EXPECT_NE(InvalidInputMessage([&] { RunBench(b); }).find("needs a GPU target"), std::string::npos);
  EXPECT_FALSE(fs::exists(b.out_dir));
}

TEST(ProfileDuringFlag, ResumeKeepsTheProfilingFlags) {
  OptimizeOptions o;
  o.problem_path = "problems/level1/softmax.py";
  o.target = "triton";
  o.profile_during = 3;
  o.profile_top = 2;
  o.profile_timeout_seconds = 90;
  store::RunRecord run;
  run.id = 1;
  run.config = OptionsToConfig(o, {});
  const OptimizeOptions back = OptionsFromRun(run);
  EXPECT_EQ(back.profile_during, 3);
  EXPECT_EQ(back.profile_top, 2);
  EXPECT_DOUBLE_EQ(back.profile_timeout_seconds, 90);
  run.config.erase("profile_during");  // a run started before the flag: the default
  EXPECT_EQ(OptionsFromRun(run).profile_during, -1);
}

TEST(ProfileDuringFlag, SummaryLinesSayWhenAProfileWasTaken) {
  core::KernelProfile p;
  p.status = "ok";
  p.kernels.resize(1);
  p.total.duration_us = 12.5;
  p.total.registers_per_thread = 200;
  const nlohmann::json profiles = {
      {{"node_id", 5}, {"rank", 1}, {"during_search", true}, {"profile", core::KernelProfileToJson(p)},
       {"diagnosis", {{"bottleneck", "unmeasured"}, {"text", "more warps"}}}},
      {{"node_id", 9}, {"rank", 2}, {"during_search", false}, {"profile", core::KernelProfileToJson(p)},
       {"diagnosis", {{"bottleneck", "unmeasured"}, {"text", "more warps"}}}}};
  const auto lines = ProfileSummaryLines(nullptr, profiles);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], "node 5 (#1, during the search): ncu: 12.5 us in 1 kernel, 200 registers/thread");
  EXPECT_EQ(lines[1], "  diagnosis: more warps");
  EXPECT_EQ(lines[2], "node 9 (#2): ncu: 12.5 us in 1 kernel, 200 registers/thread");
}

}  // namespace
}  // namespace kernelevolve::cli
