// CLI input checks from the new-user walkthrough: --cache-dir, --profile-top on cpu,
// a garbage store file, and compare's error rows.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "cli/compare_command.h"
#include "cli/gpu_profiling.h"
#include "cli/paths.h"
#include "core/error.h"
#include "store/store.h"

namespace kernelevolve::cli {
namespace {

namespace fs = std::filesystem;

class CliChecksTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("ke_cli_checks_{}", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "file.txt") << "a regular file\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(CliChecksTest, EnsureCacheDirCreatesItOrNamesTheFlag) {
  EnsureCacheDir(dir_ / "a" / "b");
  EXPECT_TRUE(fs::is_directory(dir_ / "a" / "b"));
  try {
    EnsureCacheDir(dir_ / "file.txt" / "cache");  // parent is a file: fails even for root
    FAIL() << "expected InvalidInputError";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("--cache-dir " + (dir_ / "file.txt" / "cache").string()),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(EnsureCacheDir(dir_ / "file.txt"), core::InvalidInputError);  // a file, not a folder
}

TEST(ProfileTopFlag, RefusedOnCpuAboveZero) {
  EXPECT_EQ(ProfileTopFor(-1, false), 0);
  EXPECT_EQ(ProfileTopFor(0, false), 0);
  EXPECT_EQ(ProfileTopFor(-1, true), 1);
  EXPECT_EQ(ProfileTopFor(3, true), 3);
  try {
    ProfileTopFor(2, false);
    FAIL() << "expected InvalidInputError";
  } catch (const core::InvalidInputError& e) {
    EXPECT_NE(std::string(e.what()).find("--profile-top 2: Nsight Compute profiling needs a GPU target"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CliChecksTest, GarbageStoreFileIsNotAStoreError) {
  const fs::path db = dir_ / "kernelevolve.db";
  std::ofstream(db) << "this is not an SQLite file, just some text that is long enough\n";
  try {
    store::Store::Open(db);
    FAIL() << "expected NotAStoreError";
  } catch (const store::NotAStoreError& e) {
    EXPECT_NE(std::string(e.what()).find("a kernelevolve store?"), std::string::npos) << e.what();
  }
}

TEST(CompareErrorRow, LeftOutOfTheGeomean) {
  CompareCell broken{"broken", "greedy", 2};
  broken.error = "broken.py: SyntaxError";
  CompareCell relu{"relu", "greedy", 0, 2.5};
  const std::string table = CompareTable({broken, relu}, {"broken", "relu"}, {"greedy"});
  EXPECT_NE(table.find("error"), std::string::npos) << table;
  EXPECT_NE(table.find(fmt::format("{:<20} {:>14}", "geomean", "2.50x")), std::string::npos) << table;
  CompareOptions options;
  options.policies = {"greedy"};
  const auto doc = CompareJson(options, {broken, relu}, {"broken", "relu"});
  EXPECT_DOUBLE_EQ(doc["geomean"]["greedy"].get<double>(), 2.5);
  EXPECT_EQ(doc["cells"][0]["error"], "broken.py: SyntaxError");
}

}  // namespace
}  // namespace kernelevolve::cli
