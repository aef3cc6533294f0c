// `kernelevolve bench` on GPU targets (issue 6): --sizes files (cli/bench_sizes.h), the
// totals against torch.compile (report/bench_summary.h), and the level-1 GPU sizes file.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "cli/bench_command.h"
#include "cli/bench_sizes.h"
#include "core/error.h"
#include "report/bench_summary.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class BenchSizesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "ke_bench_sizes_XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    problems_ = {dir_ / "relu.py", dir_ / "softmax.py"};
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path Write(const std::string& text) {
    const fs::path path = dir_ / "sizes.json";
    std::ofstream(path) << text;
    return path;
  }
  std::string ErrorOf(const std::string& text) {
    try {
      cli::LoadProblemSizes(Write(text), problems_);
    } catch (const core::InvalidInputError& e) {
      return e.what();
    }
    return "";
  }
  fs::path dir_;
  std::vector<fs::path> problems_;
};

TEST_F(BenchSizesTest, ReadsConstantsPerProblemAndSkipsComments) {
  const auto sizes = cli::LoadProblemSizes(
      Write(
          R"({"_comment": "GPU shapes", "softmax": {"batch_size": 8192, "dim": 4096, "eps": 1e-5, "mode": "fast"}})"),
      problems_);
  ASSERT_EQ(sizes.size(), 1u);
  const auto& s = sizes.at("softmax");
  EXPECT_EQ(s.at("batch_size"), "8192");
  EXPECT_EQ(s.at("dim"), "4096");
  EXPECT_EQ(std::stod(s.at("eps")), 1e-5);
  EXPECT_EQ(s.at("mode"), "fast");
}

TEST_F(BenchSizesTest, AnUnknownProblemNamesTheFileAndTheEntry) {
  const std::string error = ErrorOf(R"({"softmax": {"dim": 1}, "sofmax": {"dim": 2}})");
  EXPECT_NE(error.find((dir_ / "sizes.json").string()), std::string::npos) << error;
  EXPECT_NE(error.find("\"sofmax\" is not a problem of the suite"), std::string::npos) << error;
  EXPECT_NE(error.find("no sofmax.py there"), std::string::npos) << error;
}

TEST_F(BenchSizesTest, MalformedFilesAreInputErrors) {
  EXPECT_NE(ErrorOf("[1, 2]").find("expected an object mapping problem names"), std::string::npos);
  EXPECT_NE(ErrorOf("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(ErrorOf(R"({"relu": 5})").find("\"relu\" must map to an object"), std::string::npos);
  EXPECT_NE(
      ErrorOf(R"({"relu": {"dim": [1]}})").find("\"relu\".\"dim\" must be a number or a string"),
      std::string::npos);
  EXPECT_THROW(cli::LoadProblemSizes(dir_ / "missing.json", problems_), core::InvalidInputError);
}

TEST(BenchSizes, PerProblemValuesWinOverGlobalSets) {
  const auto merged = cli::MergeSets({"batch_size=16", "seed_scale=2", "dim=64"},
                                     {{"dim", "4096"}, {"batch_size", "8192"}, {"extra", "3"}});
  EXPECT_EQ(merged,
            (std::vector<std::string>{"batch_size=8192", "seed_scale=2", "dim=4096", "extra=3"}));
  EXPECT_EQ(cli::MergeSets({"a=1"}, {}), std::vector<std::string>{"a=1"});
}

TEST(BenchSizes, Level1GpuSizesNameEveryProblemAndOnlyItsConstants) {
  const fs::path suite = fs::path(KE_TEST_DATA_DIR) / ".." / "problems" / "level1";
  const auto problems = cli::SuiteProblems(suite);
  const auto sizes = cli::LoadProblemSizes(suite / "gpu_sizes.json", problems);
  for (const auto& p : problems) {
    const std::string stem = p.stem().string();
    ASSERT_TRUE(sizes.count(stem)) << stem << " has no GPU size in gpu_sizes.json";
    std::ifstream in(p);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const auto& [name, value] : sizes.at(stem)) {
      // The same check the worker makes at load: a module-level constant of that name.
      EXPECT_TRUE(std::regex_search(text, std::regex("(^|\\n)" + name + " *=")))
          << stem << ".py defines no constant " << name;
    }
  }
}

TEST(BenchSizes, EveryFolderGpuSizesNameItsProblemsConstants) {
  // Every problems/<folder>/gpu_sizes.json (the heavy folders, recsys, gpu_gemm) loads
  // against its folder and sets only constants its problem files define.
  const fs::path root = fs::path(KE_TEST_DATA_DIR) / ".." / "problems";
  int folders = 0;
  for (const auto& folder : fs::directory_iterator(root)) {
    const fs::path file = folder.path() / "gpu_sizes.json";
    if (!fs::exists(file)) continue;
    ++folders;
    const auto problems = cli::SuiteProblems(folder.path());
    const auto sizes = cli::LoadProblemSizes(file, problems);
    for (const auto& [stem, values] : sizes) {
      std::ifstream in(folder.path() / (stem + ".py"));
      const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (const auto& [name, value] : values) {
        EXPECT_TRUE(std::regex_search(text, std::regex("(^|\\n)" + name + " *=")))
            << folder.path().filename() << "/" << stem << ".py defines no constant " << name;
      }
    }
  }
  EXPECT_GE(folders, 9);
}

report::BenchEntry GpuEntry(const std::string& outcome, double vs_eager, double vs_compile) {
  report::BenchEntry e;
  e.problem = outcome;
  e.outcome = outcome;
  e.correct = outcome == "correct";
  e.speedup = e.correct ? vs_eager : 0;
  e.speedup_vs_compile = e.correct ? vs_compile : 0;
  e.has_gpu = true;
  return e;
}

TEST(BenchSummaryGpu, FastPAndGeomeanAgainstTorchCompileByHand) {
  // 5 problems: vs compile 0.8, 1.05, 1.6, 2.5 (correct), one incorrect; one correct
  // problem without a torch.compile time.
  const std::vector<report::BenchEntry> entries = {
      GpuEntry("correct", 1.0, 0.8),          GpuEntry("correct", 1.2, 1.05),
      GpuEntry("correct", 2.0, 1.6),          GpuEntry("correct", 3.0, 2.5),
      GpuEntry("no_correct_candidate", 0, 0), GpuEntry("correct", 1.1, 0)};
  const report::BenchTotals t = report::SummarizeBench(entries);
  EXPECT_TRUE(t.gpu);
  EXPECT_EQ(t.problems, 6);
  EXPECT_EQ(t.compile_measured, 4);
  EXPECT_DOUBLE_EQ(t.compile_fast_1, 3.0 / 6);  // 1.05, 1.6, 2.5
  EXPECT_DOUBLE_EQ(t.compile_fast_1_5, 2.0 / 6);
  EXPECT_DOUBLE_EQ(t.compile_fast_2, 1.0 / 6);
  const double product = 0.8 * 1.05 * 1.6 * 2.5;
  EXPECT_NEAR(t.compile_geomean_correct, std::pow(product, 0.25), 1e-12);
  EXPECT_NEAR(t.compile_geomean_all, std::pow(product, 1.0 / 6), 1e-12);
  const json doc = report::BenchTotalsToJson(t);
  EXPECT_DOUBLE_EQ(doc["vs_torch_compile"]["share_faster"].get<double>(), 0.5);
  const std::string table = report::BenchTable(entries, t);
  EXPECT_NE(table.find("vs compile"), std::string::npos);
  EXPECT_NE(table.find("vs torch.compile: faster on 50.0% of the problems"), std::string::npos)
      << table;
}

TEST(BenchSummaryGpu, CpuRunsHaveNoTorchCompileFigures) {
  report::BenchEntry e = GpuEntry("correct", 1.5, 0);
  e.has_gpu = false;
  const report::BenchTotals t = report::SummarizeBench({e});
  EXPECT_FALSE(t.gpu);
  EXPECT_TRUE(report::BenchTotalsToJson(t)["vs_torch_compile"].is_null());
  EXPECT_EQ(report::BenchTable({e}, t).find("vs compile"), std::string::npos);
}

TEST(BenchSummaryGpu, ReadsTheTorchCompileSpeedupFromResultJson) {
  const json result = {
      {"status", "ok"},
      {"evaluations", 6},
      {"best", {{"speedup_vs_eager", 1.4}}},
      {"gpu", {{"best_speedup_vs_torch_compile", 1.12}, {"device", "NVIDIA H200"}}}};
  report::BenchEntry e = report::BenchEntryFromResult(result, report::BenchEntry{});
  EXPECT_TRUE(e.has_gpu);
  EXPECT_DOUBLE_EQ(e.speedup_vs_compile, 1.12);
  EXPECT_DOUBLE_EQ(report::BenchEntryToJson(e)["speedup_vs_torch_compile"].get<double>(), 1.12);
  const report::BenchEntry cpu = report::BenchEntryFromResult(
      {{"status", "ok"}, {"best", {{"speedup_vs_eager", 2}}}}, report::BenchEntry{});
  EXPECT_FALSE(cpu.has_gpu);
  EXPECT_DOUBLE_EQ(cpu.speedup_vs_compile, 0);
}

}  // namespace
}  // namespace kernelevolve
