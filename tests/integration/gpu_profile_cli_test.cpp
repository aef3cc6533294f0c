// Issue 6 end to end through the binary, without a GPU: optimize --target triton under
// TRITON_INTERPRET=1 writes the eager breakdown (torch.profiler, CPU activity here) and a
// "skipped" ncu profile (stored, in result.json, on the console); bench --sizes applies
// per-problem constants, and a constant the problem lacks is that problem's load error.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

using testing_util::ReadFile;

// These tests check the no-GPU path (TRITON_INTERPRET=1, ncu "skipped"), GPU machine or
// not (tests/gpu covers the GPU path).
using testing_util::kInterpretWithoutGpuEnv;

class GpuProfileCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_util::FreshTestDir("ke_gpuprof");
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  /// Runs the binary with `args` from the source folder; (exit code, stdout + stderr).
  std::pair<int, std::string> Run(const std::string& args, const std::string& env = "") {
    const std::string cmd = fmt::format("cd '{}' && {} '{}' {} >'{}' 2>&1", KE_SOURCE_DIR, env,
                                        KE_BINARY_PATH, args, (dir_ / "log.txt").string());
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(dir_ / "log.txt")};
  }
  fs::path dir_;
};

TEST_F(GpuProfileCliTest, OptimizeTritonWritesBaselineBreakdownAndProfileNotes) {
  const fs::path out = dir_ / "relu";
  auto [code, log] =
      Run(fmt::format(
              "optimize problems/level1/relu.py --target triton --set batch_size=4 --set dim=64 "
              "--budget 2 --no-kb --seeds 1 --confirm-rounds 0 --min-time 0.01 --profile-top 2 "
              "--cache-dir '{}' --out '{}'",
              (dir_ / "cache").string(), out.string()),
          kInterpretWithoutGpuEnv);
  ASSERT_EQ(code, 0) << log;
  const auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  const auto& breakdown = doc.at("gpu").at("baseline_profile");
  EXPECT_EQ(breakdown.at("activity"), "cpu");
  ASSERT_FALSE(breakdown.at("kernels").empty()) << breakdown.dump(2);
  EXPECT_NE(breakdown.at("kernels")[0].at("name").get<std::string>().find("aten::"),
            std::string::npos);
  // No CUDA device: one "skipped" profile, and no second attempt.
  ASSERT_EQ(doc.at("profiles").size(), 1u) << doc.at("profiles").dump(2);
  const auto& entry = doc.at("profiles")[0];
  EXPECT_EQ(entry.at("profile").at("status"), "skipped");
  EXPECT_EQ(entry.at("node_id"), doc.at("best").at("node_id"));
  EXPECT_EQ(doc.at("best").at("profile").at("rank"), 1);
  EXPECT_NE(log.find("eager baseline (torch.profiler, cpu)"), std::string::npos) << log;
  EXPECT_NE(log.find("no CUDA device (TRITON_INTERPRET=1): no ncu profile"), std::string::npos)
      << log;
  EXPECT_EQ(log.find("profiling node"), std::string::npos) << "announced a profile that is not run: " << log;
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2((out / "kernelevolve.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM profiles WHERE status = 'skipped'", -1,
                               &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_EQ(sqlite3_column_int(stmt, 0), 1);
  sqlite3_finalize(stmt);
  sqlite3_close(db);
}

TEST_F(GpuProfileCliTest, ProfileTopIsBounded) {
  auto [code, log] =
      Run(fmt::format("optimize problems/level1/relu.py --target triton --profile-top 7 --out '{}'",
                      (dir_ / "x").string()));
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("--profile-top 7: give 0 (no profiling) to 3"), std::string::npos) << log;
}

TEST_F(GpuProfileCliTest, ProfileDuringNeedsAGpuTarget) {
  auto [code, log] = Run(fmt::format(
      "optimize problems/level1/relu.py --target cpu --profile-during 2 --out '{}'", (dir_ / "x").string()));
  EXPECT_EQ(code, 2) << log;
  EXPECT_NE(log.find("error: --profile-during 2: Nsight Compute profiling needs a GPU target"),
            std::string::npos)
      << log;
}

TEST_F(GpuProfileCliTest, ProfileDuringProfilesTheExpandedNodeAndTheTopStepReusesIt) {
  // Under TRITON_INTERPRET=1 ncu is "skipped" (no CUDA device): the first expansion is
  // profiled once, no more profiles are tried, and --profile-top reuses that profile.
  const fs::path out = dir_ / "relu";
  auto [code, log] =
      Run(fmt::format(
              "optimize problems/level1/relu.py --target triton --set batch_size=4 --set dim=64 "
              "--budget 4 --drafts 1 --no-kb --seeds 1 --confirm-rounds 0 --min-time 0.01 "
              "--profile-during 3 --profile-top 1 --cache-dir '{}' --out '{}'",
              (dir_ / "cache").string(), out.string()),
          kInterpretWithoutGpuEnv);
  ASSERT_EQ(code, 0) << log;
  // No "profiling node N with ncu..." announcement for a profile that is not run.
  EXPECT_EQ(log.find("profiling node"), std::string::npos) << log;
  // One attempt's line ("node N: ncu: no CUDA device ..."), besides the summary's
  // "node N (#R, during the search): ncu: ..." at the end.
  int attempts = 0;
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("node ", 0) == 0 && line.find("(#") == std::string::npos &&
        line.find(": ncu: no CUDA device (TRITON_INTERPRET=1)") != std::string::npos) {
      ++attempts;
    }
  }
  EXPECT_EQ(attempts, 1) << "profiled other than once: " << log;
  const auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  ASSERT_EQ(doc.at("profiles").size(), 1u) << doc.at("profiles").dump(2);
  const auto& entry = doc.at("profiles")[0];
  EXPECT_EQ(entry.at("during_search"), true);
  EXPECT_EQ(entry.at("profile").at("status"), "skipped");
  EXPECT_NE(log.find("during the search): ncu:"), std::string::npos) << log;
}

TEST_F(GpuProfileCliTest, BenchSizesApplyPerProblemAndAMissingConstantIsThatProblemsError) {
  const fs::path suite = dir_ / "suite";
  fs::create_directories(suite);
  fs::copy_file(fs::path(KE_SOURCE_DIR) / "problems/level1/relu.py", suite / "relu.py");
  fs::copy_file(fs::path(KE_SOURCE_DIR) / "problems/level1/tanh.py", suite / "tanh.py");
  std::ofstream(suite / "sizes.json")
      << R"({"relu": {"batch_size": 3, "dim": 40}, "tanh": {"no_such_constant": 1}})";
  std::ofstream(dir_ / "typo.json") << R"({"relu": {"dim": 8}, "rleu": {"dim": 8}})";
  auto [bad_code, bad_log] =
      Run(fmt::format("bench '{}' --sizes '{}' --out '{}'", suite.string(),
                      (dir_ / "typo.json").string(), (dir_ / "bad").string()));
  EXPECT_EQ(bad_code, 2) << bad_log;
  EXPECT_NE(bad_log.find("\"rleu\" is not a problem of the suite"), std::string::npos) << bad_log;

  const fs::path out = dir_ / "bench";
  auto [code, log] = Run(fmt::format(
      "bench '{}' --sizes '{}' --budget 1 --threads 1 --seeds 1 --min-time 0.01 "
      "--confirm-rounds 0 --set dim=99 --out '{}' --cache-dir '{}'",
      suite.string(), (suite / "sizes.json").string(), out.string(), (dir_ / "cache").string()));
  ASSERT_EQ(code, 0) << log;
  const auto doc = nlohmann::json::parse(ReadFile(out / "bench.json"));
  EXPECT_EQ(doc.at("sizes_file"), (suite / "sizes.json").string());
  const auto relu = nlohmann::json::parse(ReadFile(out / "relu" / "result.json"));
  EXPECT_EQ(relu.at("overrides"),
            (nlohmann::json{{"batch_size", "3"}, {"dim", "40"}}));  // its own dim wins
  const auto& tanh = doc.at("problems")[1];
  EXPECT_EQ(tanh.at("outcome"), "load_error");
  EXPECT_NE(tanh.at("message").get<std::string>().find("no_such_constant"), std::string::npos)
      << tanh.dump(2);
}

}  // namespace
}  // namespace kernelevolve
