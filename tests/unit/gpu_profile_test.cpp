// GPU profiling (issue 6): the runner's ncu answer read into core::KernelProfile, its
// round trip through the store (schema v5), and the diagnosis rules that use it.
#include <gtest/gtest.h>

#include "core/error.h"
#include "core/kernel_profile.h"
#include "operators/template/profile_diagnosis.h"
#include "profile_test_util.h"
#include "store_test_util.h"

namespace kernelevolve {
namespace {

using nlohmann::json;
using testing_util::CorrectMemoryBound;

/// What ncu_profile.run_ncu returns for tests/data/ncu/two_kernels.csv (the figures
/// tests/python/test_gpu_profile.py checks the parser gives).
json TwoKernelAnswer() {
  return json::parse(R"({
    "status": "ok", "note": "", "tool": "ncu", "seconds": 21.5,
    "kernels": [
      {"id": 0, "name": "_row_kernel", "duration_us": 96.384, "dram_throughput_pct": 41.52,
       "sm_throughput_pct": 23.07, "achieved_occupancy_pct": 18.75, "registers_per_thread": 168,
       "block_size": 128, "grid_size": 8192, "stalls_pct": {"long_scoreboard": 61.4},
       "top_stalls": [{"reason": "long_scoreboard", "pct": 61.4, "share": 0.6914}]},
      {"id": 1, "name": "_epilogue_kernel", "duration_us": 32.128, "dram_throughput_pct": 88.0,
       "sm_throughput_pct": 30.0, "achieved_occupancy_pct": 90.0, "registers_per_thread": 32,
       "block_size": 256, "grid_size": 1056, "stalls_pct": {}, "top_stalls": []}],
    "total": {"kernels": 2, "duration_us": 128.512, "dram_throughput_pct": 53.14,
              "sm_throughput_pct": 24.80, "achieved_occupancy_pct": 36.56, "registers_per_thread": 168,
              "top_stalls": [{"reason": "long_scoreboard", "pct": 51.05, "share": 0.58},
                             {"reason": "lg_throttle", "pct": 12.5, "share": 0.14},
                             {"reason": "wait", "pct": 11.2, "share": 0.13}]}})");
}

TEST(KernelProfile, ReadsTheRunnersAnswerAndRoundTrips) {
  const core::KernelProfile p = core::KernelProfileFromJson(TwoKernelAnswer());
  ASSERT_TRUE(p.Ok());
  ASSERT_EQ(p.kernels.size(), 2u);
  EXPECT_EQ(p.kernels[0].name, "_row_kernel");
  EXPECT_DOUBLE_EQ(*p.kernels[0].registers_per_thread, 168);
  EXPECT_DOUBLE_EQ(*p.kernels[1].grid_size, 1056);
  EXPECT_DOUBLE_EQ(*p.total.duration_us, 128.512);
  ASSERT_EQ(p.total.top_stalls.size(), 3u);
  EXPECT_EQ(p.total.top_stalls[1].reason, "lg_throttle");
  EXPECT_FALSE(p.total.block_size.has_value());  // the call has no single block size
  const core::KernelProfile back = core::KernelProfileFromJson(core::KernelProfileToJson(p));
  EXPECT_EQ(core::KernelProfileToJson(back), core::KernelProfileToJson(p));
}

TEST(KernelProfile, AFailedProfileIsANoteAndBadFieldsAreNamed) {
  const core::KernelProfile p =
      core::KernelProfileFromJson({{"status", "not_permitted"},
                                   {"note", "ncu: no permission (ERR_NVGPUCTRPERM)"},
                                   {"kernels", json::array()}});
  EXPECT_FALSE(p.Ok());
  EXPECT_FALSE(p.total.dram_throughput_pct.has_value());
  EXPECT_EQ(operators::ProfileLine(p), "ncu: ncu: no permission (ERR_NVGPUCTRPERM)");
  json bad = TwoKernelAnswer();
  bad["kernels"][1]["dram_throughput_pct"] = "88%";
  try {
    core::KernelProfileFromJson(bad);
    FAIL() << "expected InvalidInputError";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("kernels[1].dram_throughput_pct"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(core::KernelProfileFromJson({{"note", "x"}}), core::InvalidInputError);
}

TEST(ProfileDiagnosis, ProfileLineNamesTheFiguresAndStalls) {
  const std::string line = operators::ProfileLine(core::KernelProfileFromJson(TwoKernelAnswer()));
  EXPECT_EQ(
      line,
      "ncu: 128.5 us in 2 kernels, DRAM 53% of peak, SM 25%, occupancy 37%, 168 registers/thread, "
      "stalls: long_scoreboard 58%, lg_throttle 14%, wait 13%");
}

TEST(ProfileDiagnosis, HighRegistersComeFirst) {
  const auto d = operators::DiagnoseWithProfile(CorrectMemoryBound(0.5),
                                                testing_util::OkNcuProfile(100, 40, 20, 20, 168));
  EXPECT_NE(d.text.find("168 registers per thread cap occupancy"), std::string::npos) << d.text;
  ASSERT_GE(d.preferred_moves.size(), 3u);
  EXPECT_EQ(d.preferred_moves[0].knob, "num_warps");
  EXPECT_EQ(d.preferred_moves[0].value, 8);
  EXPECT_EQ(d.preferred_moves[2].knob, "num_stages");
  EXPECT_EQ(d.bottleneck, operators::Bottleneck::kMemoryBound);  // the evaluation's, kept
}

TEST(ProfileDiagnosis, LowDramAndLowOccupancyAskForMoreWarps) {
  const auto d = operators::DiagnoseWithProfile(
      CorrectMemoryBound(0.95), testing_util::OkNcuProfile(100, 35, 22, 15, 40, "long_scoreboard"));
  EXPECT_EQ(d.bottleneck,
            operators::Bottleneck::kMemoryBound);  // overrides near_roofline by fraction
  EXPECT_NE(d.text.find("parent correct at 1.20x"), std::string::npos);
  EXPECT_NE(d.text.find("low DRAM throughput and low occupancy: more warps / rows per program"),
            std::string::npos);
  EXPECT_NE(d.text.find("stalls: long_scoreboard 60%, wait 12%"), std::string::npos) << d.text;
  EXPECT_EQ(d.preferred_moves[0].knob, "num_warps");
  EXPECT_EQ(d.preferred_moves[2].knob, "persistent");
  EXPECT_EQ(d.preferred_moves[2].value, "yes");
}

TEST(ProfileDiagnosis, DramAtTheRoofIsNearRoofline) {
  const auto d = operators::DiagnoseWithProfile(CorrectMemoryBound(0.7),
                                                testing_util::OkNcuProfile(100, 91, 80, 20, 30));
  EXPECT_EQ(d.bottleneck, operators::Bottleneck::kNearRoofline);
  EXPECT_NE(d.text.find("DRAM at 91% of peak: at the memory roof"), std::string::npos) << d.text;
}

TEST(ProfileDiagnosis, BusySmPipesAndLoadStallsHaveTheirOwnAdvice) {
  const auto sm = operators::DiagnoseWithProfile(CorrectMemoryBound(0.4),
                                                 testing_util::OkNcuProfile(100, 30, 80, 75, 40));
  EXPECT_EQ(sm.bottleneck, operators::Bottleneck::kComputeBound);
  EXPECT_NE(sm.text.find("SM pipes busy"), std::string::npos);
  const auto loads = operators::DiagnoseWithProfile(
      CorrectMemoryBound(0.4), testing_util::OkNcuProfile(100, 45, 70, 20, 40, "long_scoreboard"));
  EXPECT_NE(loads.text.find("warps wait on global loads (long_scoreboard): more loads in flight"),
            std::string::npos);
  EXPECT_EQ(loads.preferred_moves[0].knob, "num_stages");
  EXPECT_EQ(loads.preferred_moves[0].value, 3);
  // No rule matches: only the profile line is appended, the evaluation's moves stay.
  const auto plain = operators::DiagnoseWithProfile(
      CorrectMemoryBound(0.4), testing_util::OkNcuProfile(100, 70, 70, 30, 40, "wait"));
  EXPECT_EQ(plain.preferred_moves.size(),
            operators::Diagnose(CorrectMemoryBound(0.4)).preferred_moves.size());
  EXPECT_NE(plain.text.find("; ncu: 100.0 us in 1 kernel, DRAM 70% of peak"), std::string::npos)
      << plain.text;
}

TEST(ProfileDiagnosis, FailedCandidatesOrProfilesKeepThePlainDiagnosis) {
  core::Evaluation failed = CorrectMemoryBound(0.5);
  failed.correct = false;
  failed.status = core::Status::kIncorrect;
  EXPECT_EQ(
      operators::DiagnoseWithProfile(failed, testing_util::OkNcuProfile(100, 30, 20, 20, 200)).text,
      operators::Diagnose(failed).text);
  core::KernelProfile timeout;
  timeout.status = "timeout";
  EXPECT_EQ(operators::DiagnoseWithProfile(CorrectMemoryBound(0.5), timeout).text,
            operators::Diagnose(CorrectMemoryBound(0.5)).text);
}

}  // namespace

namespace store::testing {
namespace {

TEST_F(StoreTest, ProfilesRoundTripPerNode) {
  auto store = Store::Open(db_path_);
  const int64_t run_id = store.CreateRun(SampleRun());
  search::Node node = MakeNode(-1, 1, 1.5, true, "profiled");
  store.CommitNode(run_id, node);
  EXPECT_FALSE(store.LoadProfile(node.id).has_value());
  const core::KernelProfile p = core::KernelProfileFromJson(TwoKernelAnswer());
  store.SaveProfile(node.id, p);
  auto back = store.LoadProfile(node.id);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(core::KernelProfileToJson(*back), core::KernelProfileToJson(p));
  core::KernelProfile again;
  again.status = "timeout";
  again.note = "ncu did not finish within 240 s";
  store.SaveProfile(node.id, again);  // replaces
  EXPECT_EQ(store.LoadProfile(node.id)->status, "timeout");
  EXPECT_THROW(store.SaveProfile(9999, p), core::IoError);  // no such node
}

}  // namespace
}  // namespace store::testing
}  // namespace kernelevolve
