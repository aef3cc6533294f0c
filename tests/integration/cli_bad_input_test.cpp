// Bad input end to end through the real binary: compare
// with a broken problem and an existing --out, an unusable --cache-dir, a garbage
// kernelevolve.db, --profile-top on cpu, and bench's --no-kb.
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

using testing_util::ReadFile;

class CliBadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing_util::FreshTestDir("ke_badin");
    fs::create_directories(dir_ / "suite");
    std::ofstream(dir_ / "suite" / "broken.py") << "import torch\nclass Model(:\n";  // syntax error
    std::ofstream(dir_ / "not_a_dir.txt") << "a regular file\n";
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// Runs `kernelevolve ARGS` from the source tree; returns the exit code, output in log_.
  int Run(const std::string& args) {
    const std::string cmd = fmt::format("cd '{}' && '{}' {} >'{}' 2>&1", KE_SOURCE_DIR, KE_BINARY_PATH, args,
                                        (dir_ / "log.txt").string());
    const int status = std::system(cmd.c_str());
    log_ = ReadFile(dir_ / "log.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

  /// A --cache-dir whose parent is a regular file: it cannot be created, even by root.
  std::string BadCache() const { return (dir_ / "not_a_dir.txt" / "cache").string(); }

  fs::path dir_;
  std::string log_;
};

TEST_F(CliBadInputTest, CompareRecordsABrokenProblemAsAnErrorRowAndRefusesAnExistingOut) {
  const fs::path out = dir_ / "compare";
  const std::string args = fmt::format(
      "compare --problems '{}' problems/level1/relu.py --policies greedy --budget 1 --threads 1 --seeds 1 "
      "--min-time 0.02 --set batch_size=8 --set dim=256 --out '{}' --cache-dir '{}' --quiet",
      (dir_ / "suite" / "broken.py").string(), out.string(), (dir_ / "cache").string());
  ASSERT_EQ(Run(args), 0) << log_;  // as bench: the comparison ran
  const auto doc = nlohmann::json::parse(ReadFile(out / "compare.json"));
  ASSERT_EQ(doc["cells"].size(), 2u) << doc.dump(2);
  EXPECT_EQ(doc["cells"][0]["problem"], "broken");
  EXPECT_FALSE(doc["cells"][0]["error"].get<std::string>().empty()) << doc.dump(2);
  EXPECT_TRUE(doc["cells"][1]["error"].get<std::string>().empty()) << doc.dump(2);
  EXPECT_GT(doc["cells"][1]["best_speedup"].get<double>(), 0) << doc.dump(2);
  // The geomean covers the problem that loaded.
  EXPECT_DOUBLE_EQ(doc["geomean"]["greedy"].get<double>(), doc["cells"][1]["best_speedup"].get<double>());
  const std::string table = ReadFile(out / "compare.txt");
  EXPECT_NE(table.find("error"), std::string::npos) << table;
  const size_t geomean = table.find("geomean");
  ASSERT_NE(geomean, std::string::npos) << table;
  const std::string row = table.substr(geomean, table.find('\n', geomean) - geomean);
  EXPECT_NE(row.back(), '-') << table;  // relu's speedup, not "-"

  // A second compare into the same folder is refused, as bench refuses its --out.
  const std::string before = ReadFile(out / "compare.json");
  EXPECT_EQ(Run(args), 2) << log_;
  EXPECT_NE(log_.find("already holds a compare run; choose another directory"), std::string::npos) << log_;
  EXPECT_EQ(ReadFile(out / "compare.json"), before);
}

TEST_F(CliBadInputTest, UnusableCacheDirIsBadInputBeforeAnyWork) {
  const std::string relu = "problems/level1/relu.py";
  EXPECT_EQ(Run(fmt::format("optimize {} --out '{}' --cache-dir '{}'", relu, (dir_ / "o").string(), BadCache())), 2)
      << log_;
  EXPECT_NE(log_.find("--cache-dir"), std::string::npos) << log_;
  EXPECT_EQ(log_.find("loading"), std::string::npos) << log_;  // refused before the problem loads
  EXPECT_FALSE(fs::exists(dir_ / "o"));

  EXPECT_EQ(Run(fmt::format("bench '{}' --out '{}' --cache-dir '{}'", (dir_ / "suite").string(),
                            (dir_ / "b").string(), BadCache())), 2)
      << log_;
  EXPECT_NE(log_.find("--cache-dir"), std::string::npos) << log_;
  EXPECT_FALSE(fs::exists(dir_ / "b"));

  EXPECT_EQ(Run(fmt::format("compare --problems {} --policies greedy --out '{}' --cache-dir '{}'", relu,
                            (dir_ / "c").string(), BadCache())), 2)
      << log_;
  EXPECT_NE(log_.find("--cache-dir"), std::string::npos) << log_;
  EXPECT_FALSE(fs::exists(dir_ / "c"));
}

TEST_F(CliBadInputTest, ResumeOnAGarbageDatabaseIsBadInput) {
  fs::create_directories(dir_ / "run");
  std::ofstream(dir_ / "run" / "kernelevolve.db") << "this is not an SQLite file, just some text\n";
  EXPECT_EQ(Run(fmt::format("resume '{}'", (dir_ / "run").string())), 2) << log_;
  EXPECT_NE(log_.find("a kernelevolve store?"), std::string::npos) << log_;
  EXPECT_EQ(log_.find("internal error"), std::string::npos) << log_;
}

TEST_F(CliBadInputTest, ProfileTopOnCpuIsRefusedAndBenchAcceptsNoKb) {
  EXPECT_EQ(Run("optimize problems/level1/relu.py --profile-top 2"), 2) << log_;
  EXPECT_NE(log_.find("--profile-top 2: Nsight Compute profiling needs a GPU target"), std::string::npos) << log_;
  const std::string suite = (dir_ / "suite").string();
  EXPECT_EQ(Run(fmt::format("bench '{}' --profile-top 1 --out '{}'", suite, (dir_ / "b").string())), 2) << log_;
  EXPECT_NE(log_.find("needs a GPU target"), std::string::npos) << log_;
  EXPECT_FALSE(fs::exists(dir_ / "b"));
  // --no-kb parses (the flag refused next is --budget 0, checked after parsing).
  EXPECT_EQ(Run(fmt::format("bench '{}' --no-kb --budget 0", suite)), 2) << log_;
  EXPECT_NE(log_.find("--budget must be at least 1"), std::string::npos) << log_;
  EXPECT_EQ(Run(fmt::format("bench '{}' --no-kb --kb '{}'", suite, (dir_ / "kb.db").string())), 2) << log_;
  EXPECT_NE(log_.find("excludes"), std::string::npos) << log_;
}

}  // namespace
}  // namespace kernelevolve
