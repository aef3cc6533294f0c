// DiagnoseWithProfile on multi-kernel profiles: the kernel holding most of the time
// decides the rule, and load/store-pipe stalls have their own advice (issue 6). The
// figures are the H200 profile of group_norm's split layout (docs/gpu.md, fourth session).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/evaluation.h"
#include "core/kernel_profile.h"
#include "operators/template/profile_diagnosis.h"
#include "profile_test_util.h"

namespace kernelevolve {
namespace {

core::Evaluation CorrectAt(double fraction) {
  return testing_util::CorrectMemoryBound(fraction, 0.54);
}

core::KernelMetrics Kernel(const std::string& name, double us, double dram, double occupancy,
                           const std::string& stall) {
  core::KernelMetrics k;
  k.name = name;
  k.duration_us = us;
  k.dram_throughput_pct = dram;
  k.achieved_occupancy_pct = occupancy;
  k.sm_throughput_pct = 8;
  k.registers_per_thread = 30;
  k.top_stalls = {{stall, 40, 0.32}, {"long_scoreboard", 25, 0.21}};
  return k;
}

/// Stage kernels near the roof, one element kernel far below it with most of the time.
core::KernelProfile SplitGroupNorm() {
  core::KernelProfile p;
  p.status = "ok";
  p.kernels = {Kernel("_split_stage0", 36.9, 77, 92, "long_scoreboard"),
               Kernel("_split_combine0", 2.5, 0.1, 11, "wait"),
               Kernel("_split_stage1", 37.7, 75, 92, "long_scoreboard"),
               Kernel("_split_combine1", 2.6, 0.1, 11, "wait"),
               Kernel("_split_elements", 428.4, 12, 64, "mio_throttle")};
  p.total = Kernel("", 508.2, 21, 68, "mio_throttle");
  return p;
}

bool HasMove(const operators::Diagnosis& d, const std::string& knob) {
  return std::any_of(d.preferred_moves.begin(), d.preferred_moves.end(),
                     [&](const operators::KnobPreference& m) { return m.knob == knob; });
}

TEST(ProfileKernelRules, TheDominantKernelIsNamedAndDecides) {
  const auto d = operators::DiagnoseWithProfile(CorrectAt(0.15), SplitGroupNorm());
  EXPECT_NE(d.text.find("kernel _split_elements takes 84% of the time at DRAM 12% of peak "
                        "(stalls: mio_throttle first)"),
            std::string::npos)
      << d.text;
  EXPECT_NE(d.text.find("warps wait on the load/store pipes (mio_throttle)"), std::string::npos)
      << d.text;
  EXPECT_EQ(d.bottleneck, operators::Bottleneck::kMemoryBound);
  ASSERT_FALSE(d.preferred_moves.empty());
  EXPECT_EQ(d.preferred_moves.front().knob, "num_stages");
  EXPECT_EQ(d.preferred_moves.front().value, 1);
}

TEST(ProfileKernelRules, BalancedKernelsKeepTheTotals) {
  core::KernelProfile p = SplitGroupNorm();
  p.kernels.back().duration_us = 40;  // no kernel holds half of 508 us now
  const auto d = operators::DiagnoseWithProfile(CorrectAt(0.15), p);
  EXPECT_EQ(d.text.find("takes"), std::string::npos) << d.text;
  // The totals' top stall is mio_throttle too, so the same advice, from the totals.
  EXPECT_NE(d.text.find("load/store pipes"), std::string::npos) << d.text;
}

TEST(ProfileKernelRules, ADominantKernelAtTheRoofIsNearRoofline) {
  core::KernelProfile p = SplitGroupNorm();
  p.kernels.back() = Kernel("_split_elements", 428.4, 85, 90, "long_scoreboard");
  const auto d = operators::DiagnoseWithProfile(CorrectAt(0.6), p);
  EXPECT_EQ(d.bottleneck, operators::Bottleneck::kNearRoofline) << d.text;
  EXPECT_FALSE(HasMove(d, "num_stages")) << d.text;
}

}  // namespace
}  // namespace kernelevolve
