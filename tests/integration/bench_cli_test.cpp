// End to end: `kernelevolve bench` on a three-problem suite (one correct-able, one
// broken file, one unsupported op) with the real worker and compiler; checks bench.json.
#include <gtest/gtest.h>
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
using testing_util::CountRows;
using testing_util::ReadFile;

void WriteProblem(const fs::path& path, const std::string& forward) {
  std::ofstream(path) << "import torch\nimport torch.nn as nn\n\n"
                         "class Model(nn.Module):\n"
                         "    def __init__(self):\n        super().__init__()\n\n"
                         "    def forward(self, x):\n        return " << forward << "\n\n"
                         "def get_inputs():\n    return [torch.randn(16, 512)]\n\n"
                         "def get_init_inputs():\n    return []\n";
}

TEST(BenchCli, TinySuiteRecordsEveryProblemAndTheTotals) {
  const fs::path dir = fs::temp_directory_path() / fmt::format("ke_bench_{}", ::getpid());
  fs::remove_all(dir);
  const fs::path suite = dir / "suite";
  fs::create_directories(suite);
  WriteProblem(suite / "a_relu.py", "torch.relu(x)");
  std::ofstream(suite / "b_broken.py") << "import torch\nclass Model(:\n";  // syntax error
  WriteProblem(suite / "c_histc.py", "torch.histc(x)");                      // no lowering for aten.histc
  std::ofstream(suite / "__init__.py") << "";                               // not a problem
  const fs::path out = dir / "bench";
  const std::string cmd = fmt::format(
      "cd '{}' && '{}' bench '{}' --budget 3 --threads 1 --seeds 2 --min-time 0.03 --confirm-rounds 1 "
      "--out '{}' --cache-dir '{}' >'{}' 2>'{}'",
      KE_SOURCE_DIR, KE_BINARY_PATH, suite.string(), out.string(), (dir / "cache").string(),
      (dir / "stdout.txt").string(), (dir / "stderr.txt").string());
  const int status = std::system(cmd.c_str());
  const std::string log = ReadFile(dir / "stdout.txt") + ReadFile(dir / "stderr.txt");
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log;

  const auto doc = nlohmann::json::parse(ReadFile(out / "bench.json"));
  ASSERT_EQ(doc["problems"].size(), 3u) << doc.dump(2);
  const auto& relu = doc["problems"][0];
  const auto& broken = doc["problems"][1];
  const auto& histc = doc["problems"][2];
  EXPECT_EQ(relu["problem"], "a_relu");
  EXPECT_EQ(relu["outcome"], "correct") << relu.dump(2) << log;
  EXPECT_GT(relu["speedup"].get<double>(), 0);
  EXPECT_EQ(relu["speedup_source"], "confirmed");
  EXPECT_EQ(relu["roofline"]["bound"], "memory");
  EXPECT_GT(relu["roofline"]["fraction"].get<double>(), 0);
  EXPECT_EQ(broken["outcome"], "load_error");
  EXPECT_EQ(histc["outcome"], "unsupported");
  EXPECT_NE(histc["message"].get<std::string>().find("aten.histc"), std::string::npos) << histc.dump(2);

  const auto& totals = doc["totals"];
  EXPECT_EQ(totals["problems"], 3);
  EXPECT_EQ(totals["correct"], 1);
  EXPECT_NEAR(totals["fast_0"].get<double>(), 1.0 / 3, 1e-12);
  EXPECT_NEAR(totals["correct_rate"].get<double>(), 1.0 / 3, 1e-12);
  EXPECT_GT(doc["machine"]["copy_bandwidth_gbps"].get<double>(), 0);
  // Filled from the first problem's result.json (the same probe).
  EXPECT_FALSE(doc["machine"]["compiler"].get<std::string>().empty()) << doc["machine"].dump(2);
  EXPECT_FALSE(doc["machine"]["torch_version"].get<std::string>().empty()) << doc["machine"].dump(2);

  // Each problem has its run directory; the correct one's result.json and store carry
  // the roofline figures.
  const fs::path relu_dir = relu["run_dir"].get<std::string>();
  const auto result = nlohmann::json::parse(ReadFile(relu_dir / "result.json"));
  EXPECT_EQ(result["roofline"]["bytes_per_call"], 2 * 16 * 512 * 4);
  EXPECT_DOUBLE_EQ(result["roofline"]["flops_per_call"].get<double>(), 16 * 512);
  EXPECT_EQ(result["best"]["roofline"]["bound"], "memory");
  EXPECT_GE(CountRows(relu_dir / "kernelevolve.db", "SELECT COUNT(*) FROM rooflines WHERE fraction > 0"), 1);
  EXPECT_TRUE(fs::exists(fs::path(broken["run_dir"].get<std::string>()) / "result.json"));
  EXPECT_TRUE(fs::exists(out / "bench.txt"));
  EXPECT_NE(ReadFile(dir / "stdout.txt").find("incorrect ones counted as 1.0"), std::string::npos) << log;
  EXPECT_NE(ReadFile(dir / "stderr.txt").find("[3/3] c_histc"), std::string::npos) << log;
  if (!::testing::Test::HasFailure()) fs::remove_all(dir);
}

}  // namespace
}  // namespace kernelevolve
