// End to end: the kernelevolve binary, the real worker, the real compiler.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

struct CommandResult {
  int exit_code = -1;
  std::string stdout_text;
  std::string stderr_text;
};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class OptimizeCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A parameterized test's name holds a '/': flattened, so that TearDown removes it all.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = fs::temp_directory_path() / fmt::format("ke_cli_{}_{}", ::getpid(), name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  CommandResult Run(const std::string& args) {
    fs::path out = dir_ / "stdout.txt";
    fs::path err = dir_ / "stderr.txt";
    std::string cmd = fmt::format("cd '{}' && '{}' {} >'{}' 2>'{}'", KE_SOURCE_DIR, KE_BINARY_PATH, args,
                                  out.string(), err.string());
    int status = std::system(cmd.c_str());
    CommandResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.stdout_text = ReadFile(out);
    r.stderr_text = ReadFile(err);
    return r;
  }

  int64_t CountNodes(const fs::path& db_path) {
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db, "SELECT COUNT(*) FROM nodes", -1, &stmt, nullptr);
    int64_t n = -1;
    if (sqlite3_step(stmt) == SQLITE_ROW) n = sqlite3_column_int64(stmt, 0);
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return n;
  }

  fs::path dir_;
};

TEST_F(OptimizeCliTest, ShortSoftmaxSearchFindsACorrectKernel) {
  fs::path out = dir_ / "run";
  auto r = Run(fmt::format(
      "optimize problems/level1/softmax.py --target cpu --budget 6 --out '{}' --set batch_size=32 "
      "--set dim=512 --min-time 0.03 --confirm-rounds 2 --cache-dir '{}'",
      out.string(), (dir_ / "cache").string()));
  ASSERT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  EXPECT_EQ(doc["problem"], "softmax");
  EXPECT_EQ(doc["target"], "cpu");
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["evaluations"], 6);
  EXPECT_EQ(doc["stop_reason"], "budget");
  EXPECT_TRUE(doc["best"]["correct"].get<bool>());
  EXPECT_GT(doc["best"]["latency_us"]["median"].get<double>(), 0);
  EXPECT_GT(doc["best"]["baseline_eager_us"]["median"].get<double>(), 0);
  EXPECT_GT(doc["best"]["speedup_vs_eager"].get<double>(), 0);
  EXPECT_EQ(doc["best"]["confirmed"]["rounds"], 2);
  EXPECT_FALSE(doc["machine"]["cpu_model"].get<std::string>().empty());
  EXPECT_FALSE(doc["machine"]["compiler"].get<std::string>().empty());
  fs::path source = doc["best"]["source_path"].get<std::string>();
  EXPECT_TRUE(fs::exists(fs::path(KE_SOURCE_DIR) / source) || fs::exists(source));
  EXPECT_NE(ReadFile(out / "best_kernel.cpp").find("kernelevolve_entry"), std::string::npos);
  EXPECT_EQ(CountNodes(out / "kernelevolve.db"), 6);
  EXPECT_TRUE(fs::exists(out / "fixtures" / "manifest.json"));
  EXPECT_NE(r.stdout_text.find("best: node"), std::string::npos) << r.stdout_text;
  // Issue 22: where the run's time went, the CPU target's phases with the worker's parts.
  const auto& phases = doc["phase_seconds"];
  for (const char* name : {"worker_start", "load", "load.import", "load.references", "load.eager_timing",
                           "machine_peaks", "search", "confirmation", "knowledge"}) {
    ASSERT_TRUE(phases.contains(name)) << name << " missing from " << phases.dump();
    EXPECT_GE(phases[name].get<double>(), 0) << name;
  }
  EXPECT_GE(phases["search"].get<double>(), doc["elapsed_seconds"].get<double>() * 0.5) << phases.dump();
  EXPECT_LE(phases["load.references"].get<double>(), phases["load"].get<double>()) << phases.dump();
}

struct BadProblem {
  const char* file;
  const char* expected_fragment;  // in the one-line error
};

void PrintTo(const BadProblem& p, std::ostream* os) { *os << p.file; }

class BadProblemTest : public OptimizeCliTest, public ::testing::WithParamInterface<BadProblem> {};

TEST_P(BadProblemTest, EndsWithOneLineExitCode2AndALog) {
  const BadProblem& p = GetParam();
  fs::path out = dir_ / "run";
  auto r = Run(fmt::format("optimize tests/python/bad_problems/{} --budget 2 --out '{}' --quiet", p.file,
                           out.string()));
  EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
  // One readable line naming the file and the cause.
  std::string err = r.stderr_text;
  while (!err.empty() && err.back() == '\n') err.pop_back();
  EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  EXPECT_NE(err.find(p.file), std::string::npos) << err;
  EXPECT_NE(err.find(p.expected_fragment), std::string::npos) << err;
  EXPECT_TRUE(fs::exists(out / "logs" / "problem_error.log"));
  EXPECT_FALSE(fs::exists(out / "fixtures"));
  EXPECT_FALSE(fs::exists(out / "kernelevolve.db"));
  auto doc = nlohmann::json::parse(ReadFile(out / "result.json"));
  EXPECT_EQ(doc["status"], "error");
}

INSTANTIATE_TEST_SUITE_P(
    Files, BadProblemTest,
    ::testing::Values(BadProblem{"syntax_error.py", "syntax error"},
                      BadProblem{"no_get_inputs.py", "get_inputs"},
                      BadProblem{"reference_raises.py", "raised"},
                      BadProblem{"too_big.py", "--set"},
                      // An ABI tensor no kernel dtype covers stays a bad input (exit 2),
                      // naming the tensor; a complex intermediate is exit 1 instead
                      // (walkthrough_cli_test.cpp).
                      BadProblem{"complex_input.py", "input.0 has dtype complex64, which the kernel ABI does not carry"}),
    [](const auto& info) {
      std::string name = info.param.file;
      return name.substr(0, name.find('.'));
    });

TEST_F(OptimizeCliTest, MissingFileAndBadFlagsAreInputErrors) {
  auto r = Run("optimize problems/level1/does_not_exist.py --quiet --out " + (dir_ / "a").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("no such problem file"), std::string::npos) << r.stderr_text;
  r = Run("optimize problems/level1/relu.py --target tpu --out " + (dir_ / "b").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("--target tpu"), std::string::npos) << r.stderr_text;
  r = Run("optimize problems/level1/relu.py --set batch_size --out " + (dir_ / "c").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.stderr_text.find("NAME=VALUE"), std::string::npos) << r.stderr_text;
}

}  // namespace
}  // namespace kernelevolve
