// `kernelevolve eval PROBLEM KERNEL` end to end (issue 20): the real binary, worker,
// compiler and sandbox judge hand-written kernels. Small ReLU, 2 seeds, 2 confirmation
// rounds, one build cache and machine-peak cache for the whole suite.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_test_util.h"

namespace kernelevolve {
namespace {

namespace fs = std::filesystem;

using testing_util::ReadFile;

struct Outcome {
  int exit_code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

class EvalCliTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cache_ = fs::temp_directory_path() / fmt::format("ke_eval_cache_{}", ::getpid());
    fs::create_directories(cache_);
  }
  static void TearDownTestSuite() { fs::remove_all(cache_); }
  void SetUp() override { dir_ = testing_util::FreshTestDir("ke_eval"); }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  /// Runs `kernelevolve ARGS` from the source tree.
  Outcome Run(const std::string& args) {
    const std::string cmd = fmt::format("cd '{}' && '{}' {} >'{}' 2>'{}'", KE_SOURCE_DIR, KE_BINARY_PATH, args,
                                        (dir_ / "out.txt").string(), (dir_ / "err.txt").string());
    const int status = std::system(cmd.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFile(dir_ / "out.txt"), ReadFile(dir_ / "err.txt")};
  }

  /// `eval` of a small ReLU with KERNEL (relative to the source tree) into dir_/run.
  Outcome Eval(const std::string& kernel, const std::string& extra = "") {
    return Run(fmt::format(
        "eval problems/level1/relu.py {} --set batch_size=16 --set dim=1024 --seeds 2 --threads 1 "
        "--min-time 0.02 --max-time 0.2 --confirm-rounds 2 --cache-dir '{}' --out '{}' --quiet {}",
        kernel, cache_.string(), (dir_ / "run").string(), extra));
  }

  nlohmann::json Result() { return nlohmann::json::parse(ReadFile(dir_ / "run" / "result.json")); }

  static fs::path cache_;
  fs::path dir_;
};

fs::path EvalCliTest::cache_;

/// The operator, status and node count of the run's nodes table.
std::tuple<std::string, std::string, int> StoredNode(const fs::path& db_path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(db_path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db,
                     "SELECT n.operator, e.status, (SELECT COUNT(*) FROM nodes) FROM nodes n "
                     "JOIN evaluations e ON e.node_id = n.id",
                     -1, &stmt, nullptr);
  std::tuple<std::string, std::string, int> row{"", "", 0};
  if (sqlite3_step(stmt) == SQLITE_ROW) {
    row = {reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)),
           reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1)), sqlite3_column_int(stmt, 2)};
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return row;
}

TEST_F(EvalCliTest, CorrectKernelExitsZeroWithASpeedupAndAOneNodeRun) {
  const Outcome r = Eval("tests/data/kernels/relu.cpp");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("speedup vs eager: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("over 2 interleaved rounds"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\ncorrect: "), std::string::npos) << r.out;
  const auto doc = Result();
  EXPECT_EQ(doc["status"], "ok");
  EXPECT_EQ(doc["stop_reason"], "eval");
  EXPECT_EQ(doc["evaluations"], 1);
  EXPECT_EQ(doc["eval"]["verdict"], "correct") << doc.dump(2);
  EXPECT_EQ(doc["eval"]["kernel_path"], "tests/data/kernels/relu.cpp");
  EXPECT_EQ(doc["eval"]["operator"], "user");
  EXPECT_GT(doc["best"]["speedup_vs_eager"].get<double>(), 0) << doc.dump(2);
  EXPECT_GT(doc["best"]["latency_us"]["median"].get<double>(), 0);
  EXPECT_EQ(doc["best"]["confirmed"]["rounds"], 2);
  EXPECT_TRUE(doc["best"]["confirmed"]["done"].get<bool>());
  EXPECT_EQ(doc["best"]["node_id"], doc["eval"]["node_id"]);
  EXPECT_EQ(ReadFile(dir_ / "run" / "best_kernel.cpp"),
            ReadFile(fs::path(KE_SOURCE_DIR) / "tests/data/kernels/relu.cpp"));
  EXPECT_EQ(StoredNode(dir_ / "run" / "kernelevolve.db"), std::make_tuple(std::string("user"), std::string("ok"), 1));
  // A finished eval is no search to continue.
  const Outcome again = Run(fmt::format("resume '{}' --quiet", (dir_ / "run").string()));
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("already finished"), std::string::npos) << again.err;
}

struct FailingKernel {
  const char* path;    // relative to the source tree
  const char* status;  // result.json eval.verdict and the printed status
  const char* reason;  // part of the printed reason
};

void PrintTo(const FailingKernel& k, std::ostream* os) { *os << k.path; }

class EvalFailingKernelTest : public EvalCliTest, public ::testing::WithParamInterface<FailingKernel> {};

TEST_P(EvalFailingKernelTest, ExitsOneWithTheStatusAndTheReason) {
  const FailingKernel& k = GetParam();
  const Outcome r = Eval(k.path);
  ASSERT_EQ(r.exit_code, 1) << r.out << r.err;
  const std::string line = fmt::format("\n{}: ", k.status);
  const size_t at = r.out.find(line);
  ASSERT_NE(at, std::string::npos) << r.out;
  const std::string printed = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  EXPECT_NE(printed.find(k.reason), std::string::npos) << printed;
  const auto doc = Result();
  EXPECT_EQ(doc["status"], "no_correct_candidate");
  EXPECT_TRUE(doc["best"].is_null());
  EXPECT_EQ(doc["eval"]["verdict"], k.status);
  EXPECT_NE(doc["eval"]["message"].get<std::string>().find(k.reason), std::string::npos) << doc.dump(2);
  // "failures" (what bench prints for the problem): the count by status and the reason.
  const std::string failures = doc.value("failures", "");
  EXPECT_EQ(failures.rfind(fmt::format("1 {}; e.g. node ", k.status), 0), 0u) << failures;
  EXPECT_NE(failures.find(k.reason), std::string::npos) << failures;
  EXPECT_FALSE(fs::exists(dir_ / "run" / "best_kernel.cpp"));
  EXPECT_EQ(std::get<1>(StoredNode(dir_ / "run" / "kernelevolve.db")), k.status);
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, EvalFailingKernelTest,
    ::testing::Values(FailingKernel{"tests/data/kernels/relu_nan.cpp", "incorrect", "NaN where reference is finite"},
                      FailingKernel{"tests/adversarial/zero_output.cpp", "rejected_by_check",
                                    "output.0 is constant (every element equals 0)"},
                      FailingKernel{"tests/adversarial/cached_first_result.cpp", "rejected_by_check",
                                    "a result reused from an earlier call"}));

TEST_F(EvalCliTest, BadInputsExitTwoWithOneLineNamingTheFile) {
  fs::create_directories(dir_ / "a_dir.cpp");
  std::ofstream(dir_ / "kernel.py") << "import triton\n";
  std::ofstream(dir_ / "empty.cpp") << "";
  std::ofstream(dir_ / "broken.py") << "import torch\nclass Model(:\n";
  const std::string relu = "problems/level1/relu.py";
  const std::string kernel = "tests/data/kernels/relu.cpp";
  const struct {
    std::string args;
    std::string names;  // the file (or flag) the error line names
    std::string cause;
  } cases[] = {
      {relu + " " + (dir_ / "missing.cpp").string(), (dir_ / "missing.cpp").string(), "no such kernel file"},
      {relu + " " + (dir_ / "a_dir.cpp").string(), (dir_ / "a_dir.cpp").string(), "is a directory"},
      {relu + " " + (dir_ / "empty.cpp").string(), (dir_ / "empty.cpp").string(), "is empty"},
      {relu + " " + (dir_ / "kernel.py").string(), (dir_ / "kernel.py").string(), "use --target triton"},
      {(dir_ / "nope.py").string() + " " + kernel, (dir_ / "nope.py").string(), "no such problem file"},
      {relu + " " + kernel + " --target tpu", "--target", "tpu"},
      {(dir_ / "broken.py").string() + " " + kernel, (dir_ / "broken.py").string(), "syntax error"},
  };
  for (const auto& c : cases) {
    fs::remove_all(dir_ / "run");
    const Outcome r = Run(fmt::format("eval {} --out '{}' --cache-dir '{}' --quiet", c.args,
                                      (dir_ / "run").string(), cache_.string()));
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.out << r.err;
    ASSERT_FALSE(r.err.empty()) << c.args;
    const std::string first = r.err.substr(0, r.err.find('\n'));
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
    EXPECT_NE(first.find(c.names), std::string::npos) << first;
    EXPECT_NE(first.find(c.cause), std::string::npos) << first;
  }
}

}  // namespace
}  // namespace kernelevolve
